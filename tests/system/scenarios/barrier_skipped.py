"""A barrier one rank skips: every second step rank 0 saves a checkpoint while the other ranks
wait for it in barrier() — but rank 0 forgot its own barrier() after saving and goes straight on
to the next step's gradient all_reduce.

Correct diagnosis: a rank missing from a barrier (kind "missing_rank", culprit rank 0).
Ranks 1..N-1 block in barrier() (a one-element world all_reduce, #3) at line
`wait_for_checkpoint`, first time; rank 0 never issued it and blocks in its next gradient
all_reduce (#3, 16 elements, line `grad_sync`, third time).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ncclpy as dist  # noqa: E402
import scenario_lib as lab  # noqa: E402
import training  # noqa: E402

STEPS = 5
SAVE_EVERY = 2


def save_checkpoint(model, step):
    print("rank 0: saved checkpoint at step %d (%d weights)" % (step + 1, len(model.weights)))


def checkpoint(model, rank, world_size, step):
    if (step + 1) % SAVE_EVERY == 0:
        if rank == 0:
            save_checkpoint(model, step)  # ... and no barrier() here
        else:
            dist.barrier()  # site: wait_for_checkpoint


def train(model, loader):
    training.data_parallel(model, loader, after_step=checkpoint)


def state_truth(world_size):
    seq = SAVE_EVERY + 1
    ranks = {0: lab.in_collective("all_reduce", "world", seq, training.grad_sync_site(), SAVE_EVERY + 1,
                                    count=training.GRAD)}
    for r in range(1, world_size):
        ranks[r] = lab.in_collective("barrier", "world", seq, lab.site("wait_for_checkpoint"), 1, count=1)
    return lab.write_truth(
        __file__, "missing_rank",
        "Ranks %s wait in barrier() (all_reduce #%d) for rank 0, which skipped it after saving "
        "a checkpoint and waits in its next gradient all_reduce." % (lab.rank_text(range(1, world_size)), seq),
        world_size, [0], lab.world(world_size), seq, "barrier", ranks)


def main():
    training.run(state_truth, STEPS, train)


if __name__ == "__main__":
    main()
