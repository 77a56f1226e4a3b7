"""Lightning-like: training_step logs the loss with sync_dist=True every step. The odd rank's
loader has one batch fewer: fit() returns on it and it waits outside NCCL for a model registry
while the others log step STEPS's loss.

Truth: iteration_mismatch, the odd rank ran one iteration fewer; the others wait at the
self.log line (call STEPS)."""

import corpus_lib as job
import minilightning as L

STEPS = 4


class Model(L.LightningModule):
    def training_step(self, batch, batch_idx):
        self.log("loss", float(sum(batch)), sync_dist=True)  # site: loop
        return job.grad_of(batch)


def main():
    n, r = job.world_size(), job.rank()
    odd = job.odd_rank(n)
    job.truth(__file__, "lightning", "uneven_fewer", "iteration_mismatch", [odd], "loop", STEPS, fewer=True)
    job.start()
    L.Trainer().fit(Model(), job.batches(STEPS - (1 if r == odd else 0), r))
    job.block_forever()  # upload to a model registry that never answers


if __name__ == "__main__":
    main()
