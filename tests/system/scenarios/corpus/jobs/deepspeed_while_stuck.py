"""DeepSpeed-like with a `while` loop over a generator loader: at step STALL the odd rank's
generator blocks inside its own frame (a prefetch from object storage), outside NCCL and still
in the loop: its stack holds the loop's function at the `next()` line.

Truth: stuck_outside_nccl, the odd rank; the others wait at the backward line (call STALL)."""

import corpus_lib as job
import minideepspeed

STEPS = 5
STALL = 3


def stream(batches, stall_at):
    for i, batch in enumerate(batches, 1):
        if i == stall_at:
            job.block_forever()
        yield batch


def main():
    n, r = job.world_size(), job.rank()
    odd = job.odd_rank(n)
    job.truth(__file__, "deepspeed", "while_stuck", "stuck_outside_nccl", [odd], "loop", STALL)
    job.start()
    engine = minideepspeed.initialize()
    it = stream(job.batches(STEPS, r), STALL if r == odd else None)
    step = 0
    while step < STEPS:
        batch = next(it)
        engine.backward(job.grad_of(batch))  # site: loop
        engine.step()
        step += 1


if __name__ == "__main__":
    main()
