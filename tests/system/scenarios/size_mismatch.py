"""Size mismatch: from step 3 on, the last rank's model leaves one parameter (4 values) out of
its gradient bucket (an unused parameter with find_unused_parameters=False), so it all-reduces
12 values where the others all-reduce 16.

Correct diagnosis: count mismatch (kind "count_mismatch", culprit the last rank). All ranks
block in world all_reduce #3, issued from the same line (`grad_sync`, third time): the culprit
with count 12, the others with 16.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import scenario_lib as lab  # noqa: E402
import training  # noqa: E402

STEPS = 5
GRAD = training.GRAD
UNUSED = 4
BAD_STEP = 3  # 1-based step from which the culprit drops the unused parameter


def bucket_size(rank, world_size, step):
    if rank == world_size - 1 and step + 1 >= BAD_STEP:
        return GRAD - UNUSED
    return GRAD


def train(model, loader):
    training.data_parallel(model, loader, grads_options=lambda r, w, step: {"size": bucket_size(r, w, step)})


def state_truth(world_size):
    culprit = world_size - 1
    ranks = training.all_in_grad_sync(
        world_size, BAD_STEP, lambda r: {"count": bucket_size(r, world_size, BAD_STEP - 1), "dtype": "float32"})
    return lab.write_truth(
        __file__, "count_mismatch",
        "Rank %d all-reduces %d values at all_reduce #%d where the others all-reduce %d: every "
        "rank blocks there." % (culprit, GRAD - UNUSED, BAD_STEP, GRAD),
        world_size, [culprit], lab.world(world_size), BAD_STEP, "all_reduce", ranks)


def main():
    training.run(state_truth, STEPS, train)


if __name__ == "__main__":
    main()
