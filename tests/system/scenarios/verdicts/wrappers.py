"""The job's own helpers around the collectives, as most training code has them (a
`Comm.all_reduce` method, a `reduce_tensor()` in utils), and what the ranks do once they leave
the training loop. The verdict scenarios call NCCL through these, so that the line of every
collective is the wrapper's own, and the report must name the chain of the job's frames that
leads there (the loop line first).
"""

import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import ncclpy as dist  # noqa: E402
import scenario_lib as lab  # noqa: E402


class Comm(object):
    """A communicator of the job: the world, or a group made with dist.new_group."""

    def __init__(self, group=None):
        self.group = group

    def all_reduce(self, tensor):
        dist.all_reduce(tensor, group=self.group)  # site: comm_all_reduce
        return tensor


def reduce_tensor(comm, tensor):
    """The second level: a utility every reduction of the job goes through."""
    return comm.all_reduce(tensor)  # site: reduce_tensor


def evaluate():
    """After the loop: waits for an evaluation service that never answers (outside NCCL)."""
    threading.Event().wait()  # site: evaluate


def site(name):
    return lab.site(name, __file__)


def batches(count, rank):
    """`count` batches of two samples for `rank` (what a sharded loader would yield)."""
    return [[rank + 2 * i, rank + 2 * i + 1] for i in range(count)]
