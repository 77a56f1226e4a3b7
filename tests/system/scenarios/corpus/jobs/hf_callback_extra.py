"""Hugging Face Trainer-like: the Trainer (library) holds the loop and all-reduces gradients; a
user callback averages a metric across ranks on the main process only, every EVERY steps.

Truth: extra_collective, rank 0, at the callback's reduce line (call 1)."""

import corpus_lib as job
import minitransformers as hf
from utils import dist as udist

STEPS = 6
EVERY = 4


class MetricsCallback(hf.TrainerCallback):
    def __init__(self, rank):
        self.rank = rank

    def on_step_end(self, args, state, control, **kwargs):
        if self.rank == 0 and state.global_step % EVERY == 0:
            udist.reduce_mean(job.dist.full((1,), 1.0))  # site: metric


def main():
    r = job.rank()
    job.truth(__file__, "hf_trainer", "callback_extra", "extra_collective", [0], "metric", 1)
    job.start()
    hf.Trainer(job.grad_of, job.batches(STEPS, r), [MetricsCallback(r)]).train()


if __name__ == "__main__":
    main()
