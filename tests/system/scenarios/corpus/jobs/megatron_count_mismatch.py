"""Megatron-like data parallelism over pynccl: the odd rank builds its model with one layer's
bias unused (a config flag differs), so its flattened gradient bucket is GRAD-4 values while the
others' is GRAD, from the first step.

Truth: count_mismatch, the odd rank, at the gradient line (call 1)."""

import corpus_lib as job
from parallel import mappings

STEPS = 3
GRAD = 16


def main():
    n, r = job.world_size(), job.rank()
    odd = job.odd_rank(n)
    job.truth(__file__, "megatron", "count_mismatch", "count_mismatch", [odd], "loop", 1)
    job.start()
    mappings.initialize_model_parallel(1)
    dp = mappings.get_dp_communicator()
    size = GRAD - (4 if r == odd else 0)
    for batch in job.batches(STEPS, r):
        dp.all_reduce(job.grad_of(batch, size))  # site: loop


if __name__ == "__main__":
    main()
