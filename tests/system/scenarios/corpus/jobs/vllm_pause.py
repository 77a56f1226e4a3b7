"""vLLM-like, healthy: the driver (rank 0) broadcasts each step's inputs to the workers; before
step IDLE no request arrives for PAUSE seconds, and the workers wait in the broadcast. Then
requests come and the job finishes. Inspected during the idle time, default learned limits.

Truth: healthy."""

import corpus_lib as job
from parallel import pynccl

STEPS = 30
IDLE = 25
PAUSE = 6


def main():
    r = job.rank()
    job.truth(__file__, "vllm", "pause", "healthy", [], None, None, pause=PAUSE)
    job.start()
    comm = pynccl.PyNcclCommunicator()
    meta = job.dist.zeros((4,))
    for step in range(1, STEPS + 1):
        if r == 0 and step == IDLE:
            job.pause(PAUSE)  # waiting for requests
        comm.broadcast(meta, 0)


if __name__ == "__main__":
    main()
