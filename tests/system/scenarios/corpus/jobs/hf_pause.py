"""Hugging Face Trainer-like, healthy: at step SAVE the main process's callback saves a checkpoint
for PAUSE seconds; the others wait for it in the next step's gradient all_reduce. Then the job
finishes. Inspected during the pause, default learned limits.

Truth: healthy."""

import corpus_lib as job
import minitransformers as hf

STEPS = 30
SAVE = 25
PAUSE = 6


class SaveCallback(hf.TrainerCallback):
    def __init__(self, rank):
        self.rank = rank

    def on_step_end(self, args, state, control, **kwargs):
        if self.rank == 0 and state.global_step == SAVE:
            job.pause(PAUSE)  # on_save


def main():
    r = job.rank()
    job.truth(__file__, "hf_trainer", "pause", "healthy", [], None, None, pause=PAUSE)
    job.start()
    hf.Trainer(job.grad_of, job.batches(STEPS, r), [SaveCallback(r)]).train()


if __name__ == "__main__":
    main()
