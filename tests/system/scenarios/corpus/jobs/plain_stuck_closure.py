"""Plain torch.distributed, the step built as a closure (make_step returns `step`), the batch
fetched by a helper inside the loop body. At step STALL the odd rank's fetch blocks for good
(a storage read that never returns), outside NCCL, still inside the loop.

Truth: stuck_outside_nccl, the odd rank; the others wait in the closure's all_reduce,
reached from the loop line `step(batch)` (call STALL)."""

import corpus_lib as job
from corpus_lib import dist

STEPS = 6
STALL = 3


def make_step():
    def step(batch):
        grad = job.grad_of(batch)
        dist.all_reduce(grad)
        return grad
    return step


def fetch(batch, stall):
    if stall:
        job.block_forever()
    return batch


def train(rank, odd, loader):
    step = make_step()
    for i, batch in enumerate(loader, 1):
        batch = fetch(batch, rank == odd and i == STALL)
        step(batch)  # site: loop


def main():
    n, r = job.world_size(), job.rank()
    odd = job.odd_rank(n)
    job.truth(__file__, "plain", "stuck_closure", "stuck_outside_nccl", [odd], "loop", STALL)
    job.start()
    train(r, odd, job.batches(STEPS, r))


if __name__ == "__main__":
    main()
