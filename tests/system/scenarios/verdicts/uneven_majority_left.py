"""Uneven steps where the majority left the loop: one rank's loader has one batch more than the
others' (drop_last=False). Every rank all-reduces a warm-up value, then per step its gradients,
through the job's own wrapper `Comm.all_reduce` (one level deep). After its last batch a rank
goes to evaluation, which waits outside NCCL.

Correct diagnosis: uneven steps (kind "iteration_mismatch", culprit the rank with the extra
batch: first, last or middle as the world size changes). It waits alone in world all_reduce
#STEPS+2, call STEPS+1 of the chain train -> Comm.all_reduce; the others ran that chain STEPS
times, completed all_reduce #STEPS+1 and wait in evaluate(), outside NCCL. The call-site named is
the chain (loop line first), not the wrapper's line alone.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import wrappers  # noqa: E402
from wrappers import dist, lab  # noqa: E402

STEPS = 3
GRAD = 16


def odd_rank(world_size):
    """The rank with a batch more: first, last or middle, by world size."""
    return [0, world_size - 1, world_size // 2][world_size % 3]


def train(comm, model, loader):
    world_size = dist.get_world_size()
    for batch in loader:
        grad = model.backward(batch)
        comm.all_reduce(grad)  # site: grad_sync
        model.step(grad, world_size)


def chain():
    return [lab.site("grad_sync"), wrappers.site("comm_all_reduce")]


def state_truth(world_size):
    odd = odd_rank(world_size)
    ranks = {}
    for r in range(world_size):
        if r == odd:
            ranks[r] = lab.in_collective("all_reduce", "world", STEPS + 2, wrappers.site("comm_all_reduce"), STEPS + 1,
                                         count=GRAD)
            ranks[r]["chain"] = chain()
        else:
            last = lab.last_collective("all_reduce", "world", STEPS + 1, wrappers.site("comm_all_reduce"), STEPS)
            last["chain"] = chain()
            ranks[r] = {"state": "outside_nccl", "callsite": wrappers.site("evaluate"), "last_collective": last}
    culprits = [odd] if world_size > 2 else list(range(world_size))
    return lab.write_truth(
        __file__, "iteration_mismatch",
        "Rank %d's loader has %d batches, the others' %d: it waits alone in all_reduce #%d (call %d of "
        "train -> Comm.all_reduce) while the others left the loop and wait outside NCCL in evaluate()."
        % (odd, STEPS + 1, STEPS, STEPS + 2, STEPS + 1),
        world_size, culprits, lab.world(world_size), STEPS + 2, "all_reduce", ranks, ambiguous=world_size == 2,
        sides=[[odd], [r for r in range(world_size) if r != odd]])


def main():
    rank, world_size = lab.env_int("RANK"), lab.env_int("WORLD_SIZE")
    state_truth(world_size)
    dist.set_device(lab.env_int("LOCAL_RANK"))
    dist.init_process_group("nccl")
    comm = wrappers.Comm()
    comm.all_reduce(dist.zeros((1,)))  # site: warm_up
    steps = STEPS + (1 if rank == odd_rank(world_size) else 0)
    train(comm, lab.Model(GRAD), wrappers.batches(steps, rank))
    wrappers.evaluate()


if __name__ == "__main__":
    main()
