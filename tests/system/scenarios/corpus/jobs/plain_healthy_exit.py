"""Plain torch.distributed, mp.spawn style: every rank trains STEPS steps and leaves through
os._exit(0). Inspected after the job ended.

Truth: healthy (nothing hangs; no rank was killed)."""

import os

import corpus_lib as job
from utils import dist as udist

STEPS = 4


def worker(rank, loader):
    for batch in loader:
        udist.sync_grads(job.grad_of(batch))


def main():
    job.truth(__file__, "plain", "healthy_exit", "healthy", [], None, None, finishes=True)
    job.start()
    worker(job.rank(), job.batches(STEPS, job.rank()))
    os._exit(0)


if __name__ == "__main__":
    main()
