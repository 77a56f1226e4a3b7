"""Uneven steps where the minority left the loop: one rank's loader has one batch fewer than the
others'. Every collective goes through two levels of the job's own helpers
(reduce_tensor -> Comm.all_reduce). From 4 ranks on, the first half also form a tensor-parallel
group (a sub-communicator split from the world) that all-reduces activations before the world
all-reduces gradients. After its last batch a rank goes to evaluation, outside NCCL.

Correct diagnosis: uneven steps (kind "iteration_mismatch", culprit the rank with the short
loader: first, last or middle as the world size changes): it ran the loop STEPS-1 times and left
it (its stack is in evaluate(), out of train()); the others wait in step STEPS: in the group's
all_reduce when the culprit is a member (the ranks outside the group then wait for them in the
world all_reduce: the chain), else in the world all_reduce. With 2 ranks the step counts cannot
tell who is wrong: the verdict must say so.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import wrappers  # noqa: E402
from wrappers import dist, lab  # noqa: E402

STEPS = 4
GRAD = 16


def odd_rank(world_size):
    """The rank with a batch fewer: first, last or middle, by world size."""
    return [0, world_size - 1, world_size // 2][world_size % 3]


def tp_ranks(world_size):
    return list(range(world_size // 2)) if world_size >= 4 else []


def train(world, tp, model, loader):
    world_size = dist.get_world_size()
    for batch in loader:
        if tp is not None:
            wrappers.reduce_tensor(tp, dist.full((8,), 1.0))  # site: tp_sync
        grad = model.backward(batch)
        wrappers.reduce_tensor(world, grad)  # site: grad_sync
        model.step(grad, world_size)


def chain(name):
    return [lab.site(name), wrappers.site("reduce_tensor"), wrappers.site("comm_all_reduce")]


def state_truth(world_size):
    odd, tp = odd_rank(world_size), tp_ranks(world_size)
    # Collectives before step s on the world: the warm-up, then one per step.
    ranks = {}
    for r in range(world_size):
        if r == odd:
            last = lab.last_collective("all_reduce", "world", STEPS, wrappers.site("comm_all_reduce"), STEPS - 1)
            last["chain"] = chain("grad_sync")
            ranks[r] = {"state": "outside_nccl", "callsite": wrappers.site("evaluate"), "last_collective": last}
        elif r in tp and odd in tp:
            ranks[r] = lab.in_collective("all_reduce", "group1", STEPS, wrappers.site("comm_all_reduce"), STEPS, count=8)
            ranks[r]["chain"] = chain("tp_sync")
        else:
            ranks[r] = lab.in_collective("all_reduce", "world", STEPS + 1, wrappers.site("comm_all_reduce"), STEPS,
                                         count=GRAD)
            ranks[r]["chain"] = chain("grad_sync")
    in_group = odd in tp
    communicator = {"name": "group1", "ranks": tp} if in_group else lab.world(world_size)
    ambiguous = world_size == 2
    return lab.write_truth(
        __file__, "iteration_mismatch",
        "Rank %d's loader has %d batches, the others' %d: it left the loop and waits outside NCCL in "
        "evaluate() while the others wait in step %d%s." % (
            odd, STEPS - 1, STEPS, STEPS, " (its group's members in the group all_reduce)" if in_group else ""),
        world_size, list(range(world_size)) if ambiguous else [odd], communicator,
        STEPS if in_group else STEPS + 1, "all_reduce", ranks, ambiguous=ambiguous,
        sides=[[r for r in range(world_size) if r != odd], [odd]])


def main():
    rank, world_size = lab.env_int("RANK"), lab.env_int("WORLD_SIZE")
    state_truth(world_size)
    dist.set_device(lab.env_int("LOCAL_RANK"))
    dist.init_process_group("nccl")
    world = wrappers.Comm()
    members = tp_ranks(world_size)
    group = dist.new_group(members) if members else None
    tp = wrappers.Comm(group) if rank in members else None
    wrappers.reduce_tensor(world, dist.zeros((1,)))  # site: warm_up
    steps = STEPS - (1 if rank == odd_rank(world_size) else 0)
    train(world, tp, lab.Model(GRAD), wrappers.batches(steps, rank))
    wrappers.evaluate()


if __name__ == "__main__":
    main()
