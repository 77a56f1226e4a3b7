"""Broadcast with different roots: every second step the ranks broadcast fresh parameters from
the "leader", but the last rank read a stale configuration naming rank 1 as leader while the
others use rank 0.

Correct diagnosis: root mismatch (kind "root_mismatch", culprit the last rank). All ranks block
in world broadcast #3 (after two gradient all_reduces), issued from the line `param_sync` for
the first time: the culprit with root 1, the others with root 0.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ncclpy as dist  # noqa: E402
import scenario_lib as lab  # noqa: E402
import training  # noqa: E402

STEPS = 4
SYNC_EVERY = 2


def elect_leader(rank, world_size):
    return 1 if rank == world_size - 1 else 0  # the culprit's configuration is stale


def param_sync(model, rank, world_size, step):
    if (step + 1) % SYNC_EVERY == 0:
        params = dist.tensor(model.weights[:8])
        dist.broadcast(params, src=elect_leader(rank, world_size))  # site: param_sync


def train(model, loader):
    training.data_parallel(model, loader, after_step=param_sync)


def state_truth(world_size):
    culprit = world_size - 1
    seq = SYNC_EVERY + 1
    ranks = {r: dict(lab.in_collective("broadcast", "world", seq, lab.site("param_sync"), 1, count=8),
                     root=elect_leader(r, world_size))
             for r in range(world_size)}
    return lab.write_truth(
        __file__, "root_mismatch",
        "Rank %d broadcasts from root 1 at broadcast #%d where the others use root 0: every rank "
        "blocks there." % (culprit, seq),
        world_size, [culprit], lab.world(world_size), seq, "broadcast", ranks)


def main():
    training.run(state_truth, STEPS, train)


if __name__ == "__main__":
    main()
