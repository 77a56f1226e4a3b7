"""Plain torch.distributed, a Trainer class whose `_sync_grads` method (reached from one caller)
issues the gradient all_reduce. drop_last=False: the odd rank's loader has one batch more; the
others finish the loop and wait outside NCCL for an evaluation service.

Truth: iteration_mismatch, the odd rank ran one more iteration of the loop line (call STEPS+1)."""

import corpus_lib as job
from corpus_lib import dist

STEPS = 4


class Trainer(object):
    def __init__(self, loader):
        self.loader = loader

    def _sync_grads(self, grad):
        dist.all_reduce(grad)
        return grad

    def fit(self):
        for batch in self.loader:
            grad = job.grad_of(batch)
            self._sync_grads(grad)  # site: loop
        job.block_forever()  # evaluation service that never answers


def main():
    n, r = job.world_size(), job.rank()
    odd = job.odd_rank(n)
    job.truth(__file__, "plain", "uneven_more", "iteration_mismatch", [odd], "loop", STEPS + 1)
    job.start()
    Trainer(job.batches(STEPS + (1 if r == odd else 0), r)).fit()


if __name__ == "__main__":
    main()
