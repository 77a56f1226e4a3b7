"""Lightning-like: the Trainer (library) holds the loop and reduces gradients; the user's
training_step logs the learning rate with sync_dist=True on rank 0 only, every LOG_EVERY steps.

Truth: extra_collective, rank 0, at its self.log line (its first call)."""

import corpus_lib as job
import minilightning as L

STEPS = 6
LOG_EVERY = 3


class Model(L.LightningModule):
    def __init__(self, rank):
        self.rank = rank

    def training_step(self, batch, batch_idx):
        if self.rank == 0 and (batch_idx + 1) % LOG_EVERY == 0:
            self.log("lr", 0.1, sync_dist=True)  # site: log_lr
        return job.grad_of(batch)


def main():
    r = job.rank()
    job.truth(__file__, "lightning", "log_extra", "extra_collective", [0], "log_lr", 1)
    job.start()
    L.Trainer().fit(Model(r), job.batches(STEPS, r))


if __name__ == "__main__":
    main()
