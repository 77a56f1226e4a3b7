"""Plain torch.distributed: a stats dict all-reduced entry by entry. The odd rank builds it in
another order from step BAD on (a set turned into a dict), so its first entry there is the
4-value per-class accuracy while the others reduce the 1-value loss.

Truth: count_mismatch, the odd rank, at the stats line (call 2*(BAD-1)+1)."""

import corpus_lib as job
from utils import dist as udist

STEPS = 5
BAD = 3


def reduce_stats(stats):
    for name, value in stats.items():
        udist.all_reduce(value)


def train(rank, odd, loader):
    for step, batch in enumerate(loader, 1):
        loss = job.dist.full((1,), 1.0)
        acc = job.dist.full((4,), 0.5)
        if rank == odd and step >= BAD:
            stats = {"acc": acc, "loss": loss}
        else:
            stats = {"loss": loss, "acc": acc}
        reduce_stats(stats)  # site: loop


def main():
    n, r = job.world_size(), job.rank()
    odd = job.odd_rank(n)
    job.truth(__file__, "plain", "stats_dict", "count_mismatch", [odd], "loop", 2 * (BAD - 1) + 1)
    job.start()
    train(r, odd, job.batches(STEPS, r))


if __name__ == "__main__":
    main()
