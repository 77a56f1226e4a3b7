"""A straggler: one rank is slow, none stops. Every rank computes for a random 5-15 ms per step
(data-dependent steps: the order in which the ranks reach the all_reduce changes from step to
step); the slow rank, HANGSHIM_SCENARIO_SLOW_RANK (default: the last; -1: none, an evenly fast
job), also spends SLOW_MS in its data loader every step, so every all_reduce waits for it.

Correct diagnosis: no hang (kind "healthy", every rank finishes STEPS steps); the slow rank is
the straggler at the gradient all_reduce, last to arrive at (nearly) every one of them, about
SLOW_MS later than the median rank, and while the others wait for it, it is at the loader's line
`slow_load`. With no slow rank there is no straggler: noise must not pick one.
"""

import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import scenario_lib as lab  # noqa: E402
import training  # noqa: E402

STEPS = int(os.environ.get("HANGSHIM_SCENARIO_STEPS", "300"))
SLOW_MS = 40


def slow_rank(world_size):
    value = int(os.environ.get("HANGSHIM_SCENARIO_SLOW_RANK", str(world_size - 1)))
    return value if 0 <= value < world_size else None


def load_slowly():
    time.sleep(SLOW_MS / 1000.0)  # site: slow_load


def make_before_sync(world_size):
    slow = slow_rank(world_size)
    rng = random.Random(1000 + lab.env_int("RANK"))

    def before_sync(rank, world_size, step):
        time.sleep(rng.uniform(0.005, 0.015))  # computing: a data-dependent step
        if rank == slow:
            load_slowly()

    return before_sync


def state_truth(world_size):
    slow = slow_rank(world_size)
    ranks = {r: {"state": "finished", "collectives": {"world": STEPS}} for r in range(world_size)}
    summary = ("No hang; rank %d is slow by %d ms per step in its data loader: it is the straggler at every gradient "
               "all_reduce." % (slow, SLOW_MS)) if slow is not None else "No hang and no straggler: every rank is as fast."
    return lab.write_truth(__file__, "healthy", summary, world_size, [], lab.world(world_size), None, None, ranks,
                           straggler=slow, slow_ms=SLOW_MS, slow_site=lab.site("slow_load"),
                           grad_sync_site=training.grad_sync_site(), steps=STEPS)


def main():
    world_size = lab.env_int("WORLD_SIZE")

    def train(model, loader):
        training.data_parallel(model, loader, before_sync=make_before_sync(world_size))

    training.run(state_truth, STEPS, train)


if __name__ == "__main__":
    main()
