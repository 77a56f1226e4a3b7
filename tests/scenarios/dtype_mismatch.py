"""Dtype mismatch: from step 2 on, autocast is switched on for the last rank only, so it
all-reduces float16 gradients while the others all-reduce float32 ones of the same length.

Correct diagnosis: data type mismatch (kind "dtype_mismatch", culprit the last rank). All
ranks block in world all_reduce #2 from the same line (`grad_sync`, second time): the culprit
with float16, the others with float32, 16 elements each.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ncclpy as dist  # noqa: E402
import scenario_lib as lab  # noqa: E402

BATCH = 2
STEPS = 4
GRAD = 16
BAD_STEP = 2


def grad_dtype(rank, world_size, step):
    return "float16" if rank == world_size - 1 and step + 1 >= BAD_STEP else "float32"


def train(model, loader):
    rank, world_size = dist.get_rank(), dist.get_world_size()
    for step, batch in enumerate(loader):
        grads = model.backward(batch, dtype=grad_dtype(rank, world_size, step))
        dist.all_reduce(grads)  # site: grad_sync
        model.step(grads, world_size)


def state_truth(world_size):
    culprit = world_size - 1
    ranks = {}
    for r in range(world_size):
        ranks[r] = lab.in_collective("all_reduce", "world", BAD_STEP, lab.site("grad_sync"), BAD_STEP,
                                     count=GRAD, dtype=grad_dtype(r, world_size, BAD_STEP - 1))
    return lab.write_truth(
        __file__, "dtype_mismatch",
        "Rank %d all-reduces float16 gradients at all_reduce #%d where the others use float32: "
        "every rank blocks there." % (culprit, BAD_STEP),
        world_size, [culprit], lab.world(world_size), BAD_STEP, "all_reduce", ranks)


def main():
    rank, world_size = lab.env_int("RANK"), lab.env_int("WORLD_SIZE")
    state_truth(world_size)
    dist.set_device(lab.env_int("LOCAL_RANK"))
    dist.init_process_group("nccl")
    train(lab.Model(GRAD), lab.ShardedLoader(world_size * BATCH * STEPS, rank, world_size, BATCH))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
