"""Dtype mismatch: from step 2 on, autocast is switched on for the last rank only, so it
all-reduces float16 gradients while the others all-reduce float32 ones of the same length.

Correct diagnosis: data type mismatch (kind "dtype_mismatch", culprit the last rank). All
ranks block in world all_reduce #2 from the same line (`grad_sync`, second time): the culprit
with float16, the others with float32, 16 elements each.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import scenario_lib as lab  # noqa: E402
import training  # noqa: E402

STEPS = 4
BAD_STEP = 2


def grad_dtype(rank, world_size, step):
    return "float16" if rank == world_size - 1 and step + 1 >= BAD_STEP else "float32"


def train(model, loader):
    training.data_parallel(model, loader, grads_options=lambda r, w, step: {"dtype": grad_dtype(r, w, step)})


def state_truth(world_size):
    culprit = world_size - 1
    ranks = training.all_in_grad_sync(world_size, BAD_STEP, lambda r: {"dtype": grad_dtype(r, world_size, BAD_STEP - 1)})
    return lab.write_truth(
        __file__, "dtype_mismatch",
        "Rank %d all-reduces float16 gradients at all_reduce #%d where the others use float32: "
        "every rank blocks there." % (culprit, BAD_STEP),
        world_size, [culprit], lab.world(world_size), BAD_STEP, "all_reduce", ranks)


def main():
    training.run(state_truth, STEPS, train)


if __name__ == "__main__":
    main()
