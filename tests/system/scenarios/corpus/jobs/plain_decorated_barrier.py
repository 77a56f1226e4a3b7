"""Plain torch.distributed, the epoch end decorated (`@timed`): rank 0 saves a checkpoint and
returns early, skipping the barrier the other ranks wait in; it goes on to the next epoch's
first all_reduce.

Truth: missing_rank, rank 0; the others wait at the barrier line (call 1)."""

import functools
import time

import corpus_lib as job
from utils import dist as udist

EPOCHS = 3
STEPS = 2


def timed(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        start = time.time()
        try:
            return fn(*args, **kwargs)
        finally:
            wrapper.seconds = time.time() - start
    return wrapper


@timed
def train_step(batch):
    udist.sync_grads(job.grad_of(batch))


@timed
def end_epoch(rank):
    if rank == 0:
        return "saved"  # the barrier below is skipped on rank 0
    udist.barrier()


def main():
    r = job.rank()
    job.truth(__file__, "plain", "decorated_barrier", "missing_rank", [0], "barrier", 1)
    job.start()
    for epoch in range(EPOCHS):
        for batch in job.batches(STEPS, r):
            train_step(batch)
        end_epoch(r)  # site: barrier


if __name__ == "__main__":
    main()
