"""DeepSpeed-like: engine.backward() all-reduces along one library path for the first steps and
another after (fp32 while the loss scale warms up, then bucketed). The odd rank's loader has one
batch more; the others leave the loop and wait outside NCCL for a checkpoint upload.

Truth: iteration_mismatch, the odd rank ran one more iteration of the backward line (call
STEPS+1: the count goes on across the engine's branch)."""

import corpus_lib as job
import minideepspeed

STEPS = 5


def main():
    n, r = job.world_size(), job.rank()
    odd = job.odd_rank(n)
    job.truth(__file__, "deepspeed", "uneven_branch", "iteration_mismatch", [odd], "loop", STEPS + 1)
    job.start()
    engine = minideepspeed.initialize()
    for batch in job.batches(STEPS + (1 if r == odd else 0), r):
        engine.backward(job.grad_of(batch))  # site: loop
        engine.step()
    job.block_forever()


if __name__ == "__main__":
    main()
