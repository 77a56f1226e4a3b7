"""Megatron-like tensor parallelism over pynccl: rank 0 alone all-reduces the loss over the world
for its log every LOG steps, after the gradient all_reduce. Its TP partner waits for it in the
next forward's group reduce; the others wait in the next gradient all_reduce.

Truth: extra_collective, rank 0, at its logging line (call 1)."""

import corpus_lib as job
from parallel import mappings

STEPS = 6
LOG = 3
TP = 2


def main():
    r = job.rank()
    job.truth(__file__, "megatron", "extra_dp", "extra_collective", [0], "log", 1)
    job.start()
    mappings.initialize_model_parallel(TP)
    model = mappings.GPTModel()
    dp = mappings.get_dp_communicator()
    for step, batch in enumerate(job.batches(STEPS, r), 1):
        model.forward(batch)
        dp.all_reduce(job.grad_of(batch))
        if r == 0 and step % LOG == 0:
            dp.all_reduce(job.dist.full((1,), float(step)))  # site: log


if __name__ == "__main__":
    main()
