"""Lightning-like: on_train_epoch_end saves a checkpoint on rank 0 and returns before the
strategy barrier the other ranks wait in; rank 0 goes on into the next epoch's gradient reduce.

Truth: missing_rank, rank 0; the others wait at the barrier line (call 1)."""

import corpus_lib as job
import minilightning as L

STEPS = 3


class Model(L.LightningModule):
    def __init__(self, rank):
        self.rank = rank

    def training_step(self, batch, batch_idx):
        return job.grad_of(batch)

    def on_train_epoch_end(self):
        if self.rank == 0:
            return  # saved the checkpoint; forgot the barrier
        self.trainer.strategy.barrier("epoch_end")  # site: barrier


def main():
    r = job.rank()
    job.truth(__file__, "lightning", "barrier_skip", "missing_rank", [0], "barrier", 1)
    job.start()
    L.Trainer(max_epochs=2).fit(Model(r), job.batches(STEPS, r))


if __name__ == "__main__":
    main()
