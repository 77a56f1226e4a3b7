"""Plain torch.distributed: every step all-reduces gradients, then broadcasts rank 0's buffers.
From step SWAP on, the odd rank (a refactor applied on one node) broadcasts first.

Truth: op_mismatch, the odd rank, at its broadcast line (call SWAP)."""

import corpus_lib as job
from utils import dist as udist

STEPS = 6
SWAP = 3


def train(rank, odd, loader):
    buffers = job.dist.zeros((4,))
    for step, batch in enumerate(loader, 1):
        grad = job.grad_of(batch)
        if rank == odd and step >= SWAP:
            udist.broadcast(buffers, 0)  # site: bcast_first
            udist.sync_grads(grad)
        else:
            udist.sync_grads(grad)  # site: grad_sync
            udist.broadcast(buffers, 0)  # site: bcast_after


def main():
    n, r = job.world_size(), job.rank()
    odd = job.odd_rank(n) if job.odd_rank(n) != 0 else n - 1
    job.truth(__file__, "plain", "swapped_order", "op_mismatch", [odd], "bcast_first", 1)
    job.start()
    train(r, odd, job.batches(STEPS, r))


if __name__ == "__main__":
    main()
