"""A hang in a sub-group: the first half of the ranks (at least two) form a tensor-parallel
group split from the world; every step its members all-reduce activations in the group, then
everyone all-reduces gradients in the world. At step 2 the group's last member skips the group
all_reduce (its batch has no image, so it skips the vision tower).

Correct diagnosis: a hang in the sub-group (kind "subgroup_hang", communicator "group1" = the
first half, culprit its last member). The other members block in group all_reduce #2 (line
`tp_sync`, second time); the culprit and the ranks outside the group block in world all_reduce
#2 (line `dp_sync`, second time), which the stuck members never reach.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ncclpy as dist  # noqa: E402
import scenario_lib as lab  # noqa: E402

BATCH = 2
STEPS = 4
GRAD = 16
SKIP_STEP = 2


def tp_ranks(world_size):
    return list(range(max(2, world_size // 2)))


def has_image(rank, world_size, step):
    return not (rank == tp_ranks(world_size)[-1] and step + 1 == SKIP_STEP)


def train(model, loader, tp_group):
    rank, world_size = dist.get_rank(), dist.get_world_size()
    for step, batch in enumerate(loader):
        if tp_group.is_member and has_image(rank, world_size, step):
            activations = dist.full((8,), float(rank))
            dist.all_reduce(activations, group=tp_group)  # site: tp_sync
        grad = model.backward(batch)
        dist.all_reduce(grad)  # site: dp_sync
        model.step(grad, world_size)


def state_truth(world_size):
    members = tp_ranks(world_size)
    culprit = members[-1]
    ranks = {}
    for r in range(world_size):
        if r in members and r != culprit:
            ranks[r] = lab.in_collective("all_reduce", "group1", SKIP_STEP, lab.site("tp_sync"), SKIP_STEP, count=8)
        else:
            ranks[r] = lab.in_collective("all_reduce", "world", SKIP_STEP, lab.site("dp_sync"), SKIP_STEP, count=GRAD)
    return lab.write_truth(
        __file__, "subgroup_hang",
        "Rank %d skipped the sub-group all_reduce #%d of group1 (ranks %s): the other members wait "
        "in it, rank %d and the ranks outside the group wait in world all_reduce #%d."
        % (culprit, SKIP_STEP, members, culprit, SKIP_STEP),
        world_size, [culprit], {"name": "group1", "ranks": members}, SKIP_STEP, "all_reduce", ranks)


def main():
    rank, world_size = lab.env_int("RANK"), lab.env_int("WORLD_SIZE")
    state_truth(world_size)
    dist.set_device(lab.env_int("LOCAL_RANK"))
    dist.init_process_group("nccl")
    tp_group = dist.new_group(tp_ranks(world_size))
    train(lab.Model(GRAD), lab.ShardedLoader(world_size * BATCH * STEPS, rank, world_size, BATCH), tp_group)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
