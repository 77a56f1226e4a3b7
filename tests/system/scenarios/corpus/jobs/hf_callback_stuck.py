"""Hugging Face Trainer-like: a user callback logs every step's metrics across ranks; at step
STALL the odd rank's callback blocks pushing to a hub that never answers (outside NCCL, inside
the Trainer's loop). The others wait in the next collective: the callback's reduce of that step.

Truth: stuck_outside_nccl, the odd rank; the others wait at the callback's line (call STALL)."""

import corpus_lib as job
import minitransformers as hf
from utils import dist as udist

STEPS = 5
STALL = 3


class HubCallback(hf.TrainerCallback):
    def __init__(self, rank, odd):
        self.rank, self.odd = rank, odd

    def on_step_end(self, args, state, control, **kwargs):
        if self.rank == self.odd and state.global_step == STALL:
            job.block_forever()  # push_to_hub
        udist.reduce_mean(job.dist.full((1,), 1.0))  # site: loop


def main():
    n, r = job.world_size(), job.rank()
    odd = job.odd_rank(n)
    job.truth(__file__, "hf_trainer", "callback_stuck", "stuck_outside_nccl", [odd], "loop", STALL)
    job.start()
    hf.Trainer(job.grad_of, job.batches(STEPS, r), [HubCallback(r, odd)]).train()


if __name__ == "__main__":
    main()
