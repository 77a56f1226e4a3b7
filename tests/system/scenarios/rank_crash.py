"""A rank that crashes mid-training: at step 3 the last rank runs out of memory (an exception),
prints a traceback and exits with status 1; the others go on to the step's gradient all_reduce.

Correct diagnosis: a rank exited (kind "rank_exited", culprit the last rank, exit code 1, raised
at the line marked `crash` in check_memory). It completed world all_reduce #2 (line
`grad_sync`, second time); the other ranks block in all_reduce #3 (same line, third time)
waiting for it.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import scenario_lib as lab  # noqa: E402
import training  # noqa: E402

STEPS = 5
CRASH_STEP = 3


def check_memory(rank, world_size, step):
    if rank == world_size - 1 and step + 1 == CRASH_STEP:
        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")  # site: crash


def train(model, loader):
    training.data_parallel(model, loader, before_sync=check_memory)


def state_truth(world_size):
    culprit = world_size - 1
    ranks = training.all_in_grad_sync(world_size, CRASH_STEP)
    ranks[culprit] = {"state": "exited", "exit_code": 1, "callsite": lab.site("crash"),
                      "last_collective": training.last_grad_sync(CRASH_STEP - 1)}
    return lab.write_truth(
        __file__, "rank_exited",
        "Rank %d raised at step %d and exited (status 1) after all_reduce #%d; the others wait for "
        "it in all_reduce #%d." % (culprit, CRASH_STEP, CRASH_STEP - 1, CRASH_STEP),
        world_size, [culprit], lab.world(world_size), CRASH_STEP, "all_reduce", ranks)


def main():
    training.run(state_truth, STEPS, train)


if __name__ == "__main__":
    main()
