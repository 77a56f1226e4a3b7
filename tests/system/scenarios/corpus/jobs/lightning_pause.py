"""Lightning-like, healthy: rank 0 logs to a slow experiment tracker for PAUSE seconds in
training_step of step SLOW; the others wait for it in that step's gradient reduce. The job then
finishes. Inspected during the pause, default learned limits.

Truth: healthy."""

import corpus_lib as job
import minilightning as L

STEPS = 30
SLOW = 25
PAUSE = 6


class Model(L.LightningModule):
    def __init__(self, rank):
        self.rank = rank

    def training_step(self, batch, batch_idx):
        if self.rank == 0 and batch_idx + 1 == SLOW:
            job.pause(PAUSE)
        return job.grad_of(batch)


def main():
    r = job.rank()
    job.truth(__file__, "lightning", "pause", "healthy", [], None, None, pause=PAUSE)
    job.start()
    L.Trainer().fit(Model(r), job.batches(STEPS, r))


if __name__ == "__main__":
    main()
