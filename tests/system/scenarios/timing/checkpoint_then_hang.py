"""Checkpoints, then a hang at a fast call-site: the stall must be noticed at the hang, quickly,
and never at the checkpoints.

Every rank trains with a gradient all_reduce whose waits are milliseconds. After every
SAVE_EVERY-th step rank 0 saves a checkpoint for PAUSE seconds (12: the length the issue names)
while the other ranks wait for it in barrier(), a call-site of its own. At step HANG_STEP the last
rank's data loader blocks for good; the others wait in that step's gradient all_reduce.

Correct diagnosis (kind "stuck_outside_nccl"): ranks 0..N-2 hang in the gradient all_reduce of
step HANG_STEP (iteration HANG_STEP+1 of its line); the last rank is outside NCCL, in its
loader. For the shim's learned stall limits: the waits at the checkpoint barrier are no stall
(a call-site seen for the first time gets the generous allowance), the hang is one, declared
after a limit learned from the all_reduce's own waits. Not in tests/system/scenarios/ itself: with a
fixed one-second limit (as the other shim scenario tests run) its checkpoints would be stalls.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ncclpy as dist  # noqa: E402
import scenario_lib as lab  # noqa: E402
import training  # noqa: E402

SAVE_EVERY = 15
HANG_STEP = 30  # the 31st step: the all_reduce line has completed 30 calls (its warm-up is 20)
PAUSE = float(os.environ.get("HANGSHIM_SCENARIO_PAUSE", "12"))
STEPS = HANG_STEP + 5


def block_forever():
    while True:
        time.sleep(3600)  # site: stuck_loader


def before_sync(rank, world_size, step):
    if step == HANG_STEP and rank == world_size - 1:
        block_forever()


def checkpoint(model, rank, world_size, step):
    if (step + 1) % SAVE_EVERY == 0:
        if rank == 0:
            time.sleep(PAUSE)  # saving
        dist.barrier()  # site: checkpoint_barrier


def barriers_before(step):
    return sum(1 for s in range(step) if (s + 1) % SAVE_EVERY == 0)


def state_truth(world_size):
    seq = HANG_STEP + 1 + barriers_before(HANG_STEP)
    last = world_size - 1
    ranks = {r: lab.in_collective("all_reduce", "world", seq, training.grad_sync_site(), HANG_STEP + 1, count=training.GRAD)
             for r in range(last)}
    # The last rank's last completed collective: the barrier right before the hang step when
    # there is one, else the previous step's all_reduce.
    if HANG_STEP % SAVE_EVERY == 0:
        done = lab.last_collective("barrier", "world", seq - 1, lab.site("checkpoint_barrier"), barriers_before(HANG_STEP))
    else:
        done = training.last_grad_sync(HANG_STEP)
    ranks[last] = {"state": "outside_nccl", "callsite": lab.site("stuck_loader"), "threads": [], "last_collective": done}
    return lab.write_truth(
        __file__, "stuck_outside_nccl",
        "Rank %d's data loader blocks at step %d; ranks %s wait in that step's gradient all_reduce (#%d) after "
        "%d checkpoints of %g s that made them wait in barrier()." %
        (last, HANG_STEP + 1, lab.rank_text(range(last)), seq, barriers_before(HANG_STEP), PAUSE),
        world_size, [last], lab.world(world_size), seq, "all_reduce", ranks,
        pause_seconds=PAUSE, checkpoint_site=lab.site("checkpoint_barrier"), checkpoints=barriers_before(HANG_STEP))


def train(model, loader):
    training.data_parallel(model, loader, before_sync=before_sync, after_step=checkpoint)


def main():
    training.run(state_truth, STEPS, train)


if __name__ == "__main__":
    main()
