"""Plain torch.distributed, healthy: after step SAVE rank 0 writes a checkpoint for PAUSE seconds
inside the loop; the others wait for it in the next step's all_reduce. The job then finishes.
Inspected during the pause, with the default learned limits.

Truth: healthy (a pause, not a hang)."""

import corpus_lib as job
from utils import dist as udist

STEPS = 30
SAVE = 25
PAUSE = 6


def save_checkpoint():
    job.pause(PAUSE)


def train(rank, loader):
    for step, batch in enumerate(loader, 1):
        udist.sync_grads(job.grad_of(batch))
        if rank == 0 and step == SAVE:
            save_checkpoint()


def main():
    job.truth(__file__, "plain", "checkpoint_pause", "healthy", [], None, None, pause=PAUSE)
    job.start()
    train(job.rank(), job.batches(STEPS, job.rank()))


if __name__ == "__main__":
    main()
