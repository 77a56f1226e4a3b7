"""DeepSpeed-like with gradient_accumulation_steps=2: the odd rank's loader is two micro-batches
short, so it runs one optimizer step fewer, leaves the loop and waits outside NCCL for an
evaluation service.

Truth: iteration_mismatch, the odd rank ran one iteration fewer; the others wait at the
backward line (call STEPS)."""

import corpus_lib as job
import minideepspeed

STEPS = 4
ACCUM = 2


def main():
    n, r = job.world_size(), job.rank()
    odd = job.odd_rank(n)
    job.truth(__file__, "deepspeed", "grad_accum_fewer", "iteration_mismatch", [odd], "loop", STEPS, fewer=True)
    job.start()
    engine = minideepspeed.initialize(gradient_accumulation_steps=ACCUM)
    for batch in job.batches(ACCUM * (STEPS - (1 if r == odd else 0)), r):
        engine.backward(job.grad_of(batch))  # site: loop
        engine.step()
    job.block_forever()


if __name__ == "__main__":
    main()
