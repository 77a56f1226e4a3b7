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

import ncclpy as dist  # noqa: E402
import scenario_lib as lab  # noqa: E402

BATCH = 2
STEPS = 5
GRAD = 16
CRASH_STEP = 3


def check_memory(rank, world_size, step):
    if rank == world_size - 1 and step + 1 == CRASH_STEP:
        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")  # site: crash


def train(model, loader):
    rank, world_size = dist.get_rank(), dist.get_world_size()
    for step, batch in enumerate(loader):
        grad = model.backward(batch)
        check_memory(rank, world_size, step)
        dist.all_reduce(grad)  # site: grad_sync
        model.step(grad, world_size)


def state_truth(world_size):
    culprit = world_size - 1
    grad_sync = lab.site("grad_sync")
    ranks = {}
    for r in range(world_size):
        ranks[r] = lab.in_collective("all_reduce", "world", CRASH_STEP, grad_sync, CRASH_STEP, count=GRAD)
    ranks[culprit] = {
        "state": "exited", "exit_code": 1, "callsite": lab.site("crash"),
        "last_collective": lab.last_collective("all_reduce", "world", CRASH_STEP - 1, grad_sync, CRASH_STEP - 1),
    }
    return lab.write_truth(
        __file__, "rank_exited",
        "Rank %d raised at step %d and exited (status 1) after all_reduce #%d; the others wait for "
        "it in all_reduce #%d." % (culprit, CRASH_STEP, CRASH_STEP - 1, CRASH_STEP),
        world_size, [culprit], lab.world(world_size), CRASH_STEP, "all_reduce", ranks)


def main():
    rank, world_size = lab.env_int("RANK"), lab.env_int("WORLD_SIZE")
    state_truth(world_size)
    dist.set_device(lab.env_int("LOCAL_RANK"))
    dist.init_process_group("nccl")
    train(lab.Model(GRAD), lab.ShardedLoader(world_size * BATCH * STEPS, rank, world_size, BATCH))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
