"""Megatron-like tensor parallelism over pynccl: at step SKIP the odd rank takes a
sequence-parallel shortcut that skips the layer's TP reduce and goes straight on to the world
gradient all_reduce; its TP partner waits for it in the group's all_reduce.

Truth: subgroup_hang, the odd rank; its partner waits at the forward line (call SKIP)."""

import corpus_lib as job
from parallel import mappings

STEPS = 5
SKIP = 3
TP = 2


def main():
    n, r = job.world_size(), job.rank()
    odd = n - 1
    job.truth(__file__, "megatron", "subgroup_skip", "subgroup_hang", [odd], "loop", SKIP)
    job.start()
    mappings.initialize_model_parallel(TP)
    model = mappings.GPTModel()
    dp = mappings.get_dp_communicator()
    for step, batch in enumerate(job.batches(STEPS, r), 1):
        if not (r == odd and step == SKIP):
            model.forward(batch)  # site: loop
        dp.all_reduce(job.grad_of(batch))  # site: dp_sync


if __name__ == "__main__":
    main()
