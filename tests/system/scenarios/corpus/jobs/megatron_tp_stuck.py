"""Megatron-like tensor parallelism (groups of TP consecutive ranks) over a vLLM-like pynccl
wrapper: each step's forward reduces a row-parallel layer's output in the TP group (loop line ->
model -> layer -> mapping -> communicator -> binding), then gradients are all-reduced over the
world. At step STALL the odd rank's batch never arrives (outside NCCL); its TP partner waits for
it in the group, the other ranks in the world all_reduce.

Truth: stuck_outside_nccl, the odd rank; its partner waits at the forward line (call STALL)."""

import corpus_lib as job
from parallel import mappings

STEPS = 5
STALL = 3
TP = 2


def next_batch(batch, stall):
    if stall:
        job.block_forever()
    return batch


def main():
    n, r = job.world_size(), job.rank()
    odd = n - 1
    job.truth(__file__, "megatron", "tp_stuck", "stuck_outside_nccl", [odd], "loop", STALL)
    job.start()
    mappings.initialize_model_parallel(TP)
    model = mappings.GPTModel()
    dp = mappings.get_dp_communicator()
    for step, batch in enumerate(job.batches(STEPS, r), 1):
        batch = next_batch(batch, r == odd and step == STALL)
        model.forward(batch)  # site: loop
        dp.all_reduce(job.grad_of(batch))  # site: dp_sync


if __name__ == "__main__":
    main()
