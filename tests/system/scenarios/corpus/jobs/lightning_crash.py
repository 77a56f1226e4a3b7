"""Lightning-like: training_step logs the loss with sync_dist=True; at step CRASH the odd rank
runs out of memory and its process exits 1.

Truth: rank_exited, the odd rank; the others wait at the self.log line (call CRASH)."""

import corpus_lib as job
import minilightning as L

STEPS = 5
CRASH = 3


class Model(L.LightningModule):
    def __init__(self, rank, odd):
        self.rank, self.odd = rank, odd

    def training_step(self, batch, batch_idx):
        if self.rank == self.odd and batch_idx + 1 == CRASH:
            raise MemoryError("CUDA out of memory")
        self.log("loss", float(sum(batch)), sync_dist=True)  # site: loop
        return job.grad_of(batch)


def main():
    n, r = job.world_size(), job.rank()
    odd = job.odd_rank(n)
    job.truth(__file__, "lightning", "crash", "rank_exited", [odd], "loop", CRASH)
    job.start()
    L.Trainer().fit(Model(r, odd), job.batches(STEPS, r))


if __name__ == "__main__":
    main()
