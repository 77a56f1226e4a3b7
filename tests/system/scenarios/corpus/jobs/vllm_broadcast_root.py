"""vLLM-like workers over the pynccl wrapper: every step the driver broadcasts the batch's input
metadata. The odd rank was started with another driver rank (src=1), the others with src=0.

Truth: root_mismatch, the odd rank, at the broadcast line (call 1)."""

import corpus_lib as job
from parallel import pynccl

STEPS = 3


def execute_model_loop(comm, src, steps):
    meta = job.dist.zeros((4,))
    for _ in range(steps):
        comm.broadcast(meta, src)  # site: loop


def main():
    n, r = job.world_size(), job.rank()
    odd = job.odd_rank(n)
    job.truth(__file__, "vllm", "broadcast_root", "root_mismatch", [odd], "loop", 1)
    job.start()
    execute_model_loop(pynccl.PyNcclCommunicator(), 1 if r == odd else 0, STEPS)


if __name__ == "__main__":
    main()
