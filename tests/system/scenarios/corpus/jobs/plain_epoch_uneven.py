"""Plain torch.distributed with the epoch loop in main() and the step loop in train_one_epoch(),
which all-reduces the epoch's loss after its step loop. In the second epoch the odd rank's loader
has one batch more (a sampler without set_epoch): it is in one more gradient all_reduce while the
others are already in the epoch-end all_reduce.

Truth: iteration_mismatch, the odd rank ran one more iteration; the loop line is the outermost
line that runs once per collective of the step loop, main's epoch loop line (its call 2*STEPS+1
for the gradient path)."""

import corpus_lib as job
from corpus_lib import dist

EPOCHS = 2
STEPS = 3


def train_one_epoch(loader):
    for batch in loader:
        dist.all_reduce(job.grad_of(batch))
    dist.all_reduce(dist.full((1,), 1.0))  # the epoch's loss


def main():
    n, r = job.world_size(), job.rank()
    odd = job.odd_rank(n)
    job.truth(__file__, "plain", "epoch_uneven", "iteration_mismatch", [odd], "loop", 2 * STEPS + 1)
    job.start()
    for epoch in range(EPOCHS):
        extra = 1 if (r == odd and epoch == 1) else 0
        train_one_epoch(job.batches(STEPS + extra, r))  # site: loop


if __name__ == "__main__":
    main()
