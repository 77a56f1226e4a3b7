"""Hugging Face Trainer-like: a user callback averages the loss across ranks every step. The odd
rank's dataset has one batch fewer: train() returns on it and it waits outside NCCL for an
evaluation service, while the others wait in the Trainer's gradient all_reduce of step STEPS
(the Trainer issues it before the callbacks).

Truth: iteration_mismatch, the odd rank ran one iteration fewer; the others wait in the
gradient all_reduce reached from the job's train() line, its STEPS-th call along that path."""

import corpus_lib as job
import minitransformers as hf
from utils import dist as udist

STEPS = 4


class LossCallback(hf.TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        udist.reduce_mean(job.dist.full((1,), 1.0))


def main():
    n, r = job.world_size(), job.rank()
    odd = job.odd_rank(n)
    job.truth(__file__, "hf_trainer", "callback_uneven", "iteration_mismatch", [odd], "loop", STEPS, fewer=True)
    job.start()
    trainer = hf.Trainer(job.grad_of, job.batches(STEPS - (1 if r == odd else 0), r), [LossCallback()])
    trainer.train()  # site: loop
    job.block_forever()


if __name__ == "__main__":
    main()
