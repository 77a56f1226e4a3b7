"""Flight Recorder's example (PyTorch tutorial "Flight Recorder for debugging stuck jobs"):
rank 0 issues one extra all_reduce that the other ranks never issue.

Correct diagnosis: an extra collective on rank 0 (kind "extra_collective", culprit rank 0).
Every rank blocks in world all_reduce #3: rank 0 in its extra all_reduce of a 4x5 tensor (the line
marked `extra` in train(), first time it runs), ranks 1..N-1 in the first all_reduce of the
second loop (line `second_loop`, first time, a 3x4 tensor) that rank 0 has not reached.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ncclpy as dist  # noqa: E402
import scenario_lib as lab  # noqa: E402


def train(local_rank):
    a = dist.full((3, 4), float(local_rank))
    # Write some collectives to populate the records
    for i in range(2):
        print("calling allreduce on local_rank=%d" % local_rank)
        dist.all_reduce(a)  # site: first_loop

    # rank0 is doing an additional collective
    if local_rank == 0:
        print("rank0 is doing an allreduce on tensor b, but other ranks forgot")
        b = dist.full((4, 5), float(local_rank))
        dist.all_reduce(b)  # site: extra

    for i in range(2):
        print("calling allreduce on local_rank=%d" % local_rank)
        dist.all_reduce(a)  # site: second_loop
    print("local_rank=%d exiting" % local_rank)


def state_truth(world_size):
    ranks = {0: lab.in_collective("all_reduce", "world", 3, lab.site("extra"), 1, count=20, dtype="float32")}
    for r in range(1, world_size):
        ranks[r] = lab.in_collective("all_reduce", "world", 3, lab.site("second_loop"), 1, count=12, dtype="float32")
    return lab.write_truth(
        __file__, "extra_collective",
        "Rank 0 issued an extra all_reduce (#3, 20 elements) that ranks %s never issue; they wait in "
        "their next all_reduce (12 elements) while rank 0 waits in the extra one." % lab.rank_text(range(1, world_size)),
        world_size, [0], lab.world(world_size), 3, "all_reduce", ranks)


def main():
    local_rank, world_size = lab.env_int("LOCAL_RANK"), lab.env_int("WORLD_SIZE")
    assert world_size <= 8, "world size must be less than or equal to 8"
    state_truth(world_size)
    dist.set_device(local_rank)
    dist.init_process_group("nccl")
    train(local_rank)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
