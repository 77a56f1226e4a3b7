"""A hang ended by a watchdog, as PyTorch's NCCL watchdog ends one: every step the ranks
all-reduce gradients; at step SKIP the last rank never gets there (it waits for a batch that
never comes, outside NCCL). The other ranks wait in all_reduce #SKIP. On each rank a watchdog
thread (a Python thread with a timeout, as ProcessGroupNCCL's is a C++ one) sees the collective
pending longer than TIMEOUT seconds and calls ncclCommAbort on the world communicator; the blocked
all_reduce then fails ("the communicator was aborted") and the rank exits with an error, as a
timed-out rank of PyTorch does.

Correct diagnosis: the job was aborted (kind "aborted"): ranks 0..N-2 aborted world after
all_reduce #SKIP at `grad_sync` (iteration SKIP) had been pending for at least TIMEOUT s; the last
rank never issued it and waits outside NCCL at `fetch_stall`. The watchdog writes what it did
(when the collective began, when it aborted) to $HANGSHIM_RENDEZVOUS/watchdog.<rank>.json.
"""

import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import ncclpy as dist  # noqa: E402
import scenario_lib as lab  # noqa: E402

STEPS = 5
SKIP = 3       # the 1-based step whose all_reduce the last rank never issues
TIMEOUT = 1.5  # seconds a collective may be pending before the watchdog aborts its communicator
GRAD = 16


class Watchdog(threading.Thread):
    """Aborts the communicator when the collective in flight is older than `timeout` seconds."""

    def __init__(self, comm, timeout, rank):
        threading.Thread.__init__(self, name="watchdog", daemon=True)
        self.comm = comm
        self.timeout = timeout
        self.rank = rank
        self.began = None  # time.time() the collective in flight began, None: none
        self.aborted = threading.Event()

    def begin(self):
        self.began = time.time()

    def end(self):
        self.began = None

    def run(self):
        while True:
            began = self.began
            if began is not None and time.time() - began > self.timeout:
                aborted_at = time.time()
                result = dist._nccl.ncclCommAbort(self.comm)  # the stand-in's ncclCommAbort, through the shim
                self.record(began, aborted_at, result)
                self.aborted.set()
                return
            time.sleep(0.02)

    def record(self, began, aborted_at, result):
        directory = os.environ.get("HANGSHIM_RENDEZVOUS")
        if not directory:
            return
        with open(os.path.join(directory, "watchdog.%d.json" % self.rank), "w") as f:
            json.dump({"rank": self.rank, "began": began, "aborted_at": aborted_at, "result": result}, f)


def fetch(batch, stall):
    if stall:
        threading.Event().wait()  # site: fetch_stall
    return batch


def train(model, loader, watchdog, skip_at):
    world_size = dist.get_world_size()
    for step, batch in enumerate(loader):
        batch = fetch(batch, step + 1 == skip_at)
        grad = model.backward(batch)
        watchdog.begin()
        try:
            dist.all_reduce(grad)  # site: grad_sync
        except dist.NcclError as e:
            if watchdog.aborted.wait(5):
                raise RuntimeError("watchdog: all_reduce #%d timed out after %g s; the communicator was aborted (%s)" % (
                    step + 1, watchdog.timeout, e))
            raise
        watchdog.end()
        model.step(grad, world_size)


def state_truth(world_size):
    last = world_size - 1
    ranks = {}
    for r in range(world_size):
        done = lab.last_collective("all_reduce", "world", SKIP - 1, lab.site("grad_sync"), SKIP - 1)
        if r == last:
            ranks[r] = {"state": "outside_nccl", "callsite": lab.site("fetch_stall"), "last_collective": done}
        else:
            ranks[r] = {"state": "exited", "exit_code": 1, "callsite": lab.site("grad_sync"), "last_collective": done}
    return lab.write_truth(
        __file__, "aborted",
        "Rank %d never issues all_reduce #%d (it waits for a batch outside NCCL); the watchdog of ranks %s aborts "
        "world after %g s and they exit." % (last, SKIP, lab.rank_text(range(last)), TIMEOUT),
        world_size, [last], lab.world(world_size), SKIP, "all_reduce", ranks,
        aborted_by=list(range(last)), timeout=TIMEOUT, iteration=SKIP, callsite=lab.site("grad_sync"))


def main():
    rank, world_size = lab.env_int("RANK"), lab.env_int("WORLD_SIZE")
    state_truth(world_size)
    dist.set_device(lab.env_int("LOCAL_RANK"))
    dist.init_process_group("nccl")
    watchdog = Watchdog(dist._group(None).comm, TIMEOUT, rank)
    watchdog.start()
    loader = lab.ShardedLoader(world_size * 2 * STEPS, rank, world_size, 2)
    train(lab.Model(GRAD), loader, watchdog, SKIP if rank == world_size - 1 else 0)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
