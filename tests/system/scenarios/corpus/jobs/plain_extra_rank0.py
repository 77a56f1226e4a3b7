"""Plain torch.distributed with the project's utils/dist.py: rank 0 alone all-reduces the loss
for logging every 5th step (`if rank == 0 and step % 5 == 0: reduce_mean(loss)`), after the
gradient all_reduce.

Truth: extra_collective, rank 0, at its logging line (its first call, step 5)."""

import corpus_lib as job
from utils import dist as udist

STEPS = 8
LOG_EVERY = 5


def train(rank, loader):
    for step, batch in enumerate(loader, 1):
        grad = job.grad_of(batch)
        udist.sync_grads(grad)  # site: grad_sync
        loss = job.dist.full((1,), float(step))
        if rank == 0 and step % LOG_EVERY == 0:
            udist.reduce_mean(loss)  # site: log_loss


def main():
    job.truth(__file__, "plain", "extra_rank0", "extra_collective", [0], "log_loss", 1)
    job.start()
    train(job.rank(), job.batches(STEPS, job.rank()))


if __name__ == "__main__":
    main()
