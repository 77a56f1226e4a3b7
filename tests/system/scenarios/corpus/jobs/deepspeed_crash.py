"""DeepSpeed-like: at step CRASH the odd rank raises (a NaN check) and its process exits 1; the
others wait in that step's gradient all_reduce.

Truth: rank_exited, the odd rank; the others wait at the backward line (call CRASH)."""

import corpus_lib as job
import minideepspeed

STEPS = 5
CRASH = 3


def main():
    n, r = job.world_size(), job.rank()
    odd = job.odd_rank(n)
    job.truth(__file__, "deepspeed", "crash", "rank_exited", [odd], "loop", CRASH)
    job.start()
    engine = minideepspeed.initialize()
    for step, batch in enumerate(job.batches(STEPS, r), 1):
        if r == odd and step == CRASH:
            raise FloatingPointError("loss is NaN")
        engine.backward(job.grad_of(batch))  # site: loop
        engine.step()


if __name__ == "__main__":
    main()
