"""accelerate-like: the odd rank's config says mixed_precision="fp16" (a stale config file on one
node): its gradients are all-reduced as float16, the others' as float32.

Truth: dtype_mismatch, the odd rank, at the backward line (call 1)."""

import corpus_lib as job
import miniaccelerate

STEPS = 3


def main():
    n, r = job.world_size(), job.rank()
    odd = job.odd_rank(n)
    job.truth(__file__, "accelerate", "fp16_one_rank", "dtype_mismatch", [odd], "loop", 1)
    job.start()
    accelerator = miniaccelerate.Accelerator(mixed_precision="fp16" if r == odd else "no")
    for batch in job.batches(STEPS, r):
        accelerator.backward(job.grad_of(batch))  # site: loop


if __name__ == "__main__":
    main()
