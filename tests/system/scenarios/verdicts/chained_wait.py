"""A wait that runs across communicators: two ranks form a group (a sub-communicator split from
the world) that all-reduces activations every step before the world all-reduces gradients, both
through the job's own wrapper `Comm.all_reduce`. At step STALL one member's data never arrives:
it waits for its batch, outside NCCL. Its partner waits for it in the group all_reduce; every
other rank waits in the world all_reduce for the two members.

Correct diagnosis: the stalled member is the cause (kind "stuck_outside_nccl", culprit the stalled
rank only, not its partner: the partner waits for it), in the group's all_reduce #STALL; the
headline follows the chain: the partner waits for it in the group, the other ranks wait for
both in the world.
"""

import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import wrappers  # noqa: E402
from wrappers import dist, lab  # noqa: E402

STEPS = 5
STALL = 3  # the 1-based step whose batch never arrives on the stalled rank
GRAD = 16


def stalled_rank(world_size):
    """First, last or middle, by world size."""
    return [0, world_size - 1, world_size // 2][world_size % 3]


def group_ranks(world_size):
    stalled = stalled_rank(world_size)
    return sorted([stalled, (stalled + world_size // 2) % world_size])


def fetch(batch, stall):
    if stall:
        threading.Event().wait()  # site: fetch_stall
    return batch


def train(world, group, model, loader, stall_at):
    world_size = dist.get_world_size()
    for step, batch in enumerate(loader):
        batch = fetch(batch, step + 1 == stall_at)
        if group is not None:
            group.all_reduce(dist.full((8,), 1.0))  # site: tp_sync
        grad = model.backward(batch)
        world.all_reduce(grad)  # site: grad_sync
        model.step(grad, world_size)


def state_truth(world_size):
    stalled, members = stalled_rank(world_size), group_ranks(world_size)
    comm_site = wrappers.site("comm_all_reduce")
    ranks = {}
    for r in range(world_size):
        if r == stalled:
            last = lab.last_collective("all_reduce", "world", STALL, comm_site, STALL - 1)
            last["chain"] = [lab.site("grad_sync"), comm_site]
            ranks[r] = {"state": "outside_nccl", "callsite": lab.site("fetch_stall"), "last_collective": last}
        elif r in members:
            ranks[r] = lab.in_collective("all_reduce", "group1", STALL, comm_site, STALL, count=8)
            ranks[r]["chain"] = [lab.site("tp_sync"), comm_site]
        else:
            ranks[r] = lab.in_collective("all_reduce", "world", STALL + 1, comm_site, STALL, count=GRAD)
            ranks[r]["chain"] = [lab.site("grad_sync"), comm_site]
    return lab.write_truth(
        __file__, "stuck_outside_nccl",
        "Rank %d waits for a batch outside NCCL at step %d; its group partner waits for it in group1 "
        "all_reduce #%d; the other ranks wait for both in world all_reduce #%d." % (stalled, STALL, STALL, STALL + 1),
        world_size, [stalled], {"name": "group1", "ranks": members}, STALL, "all_reduce", ranks)


def main():
    rank, world_size = lab.env_int("RANK"), lab.env_int("WORLD_SIZE")
    state_truth(world_size)
    dist.set_device(lab.env_int("LOCAL_RANK"))
    dist.init_process_group("nccl")
    members = group_ranks(world_size)
    group = dist.new_group(members)
    world = wrappers.Comm()
    world.all_reduce(dist.zeros((1,)))  # site: warm_up
    stall_at = STALL if rank == stalled_rank(world_size) else None
    train(world, wrappers.Comm(group) if rank in members else None, lab.Model(GRAD), wrappers.batches(STEPS, rank),
          stall_at)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
