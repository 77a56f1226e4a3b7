"""Plain torch.distributed started the mp.spawn way: each rank's worker runs, then the process
leaves with os._exit(0) (how multiprocessing children end). The odd rank's loader has one batch
fewer: it finishes and exits cleanly while the others wait in the last step's all_reduce.

Truth: rank_exited (exit code 0, not killed), the odd rank; the others wait at the loop line
(call STEPS)."""

import os

import corpus_lib as job
from corpus_lib import dist

STEPS = 4


def worker(rank, loader):
    for batch in loader:
        grad = job.grad_of(batch)
        dist.all_reduce(grad)  # site: loop


def main():
    n, r = job.world_size(), job.rank()
    odd = job.odd_rank(n)
    job.truth(__file__, "plain", "os_exit", "rank_exited", [odd], "loop", STEPS)
    job.start()
    worker(r, job.batches(STEPS - (1 if r == odd else 0), r))
    os._exit(0)


if __name__ == "__main__":
    main()
