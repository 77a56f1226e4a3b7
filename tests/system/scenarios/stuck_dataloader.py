"""One rank stuck outside NCCL: its data loader's background worker blocks reading a batch (a
read from a dead network mount that never returns), so its training loop waits for the next
batch forever while the other ranks wait for it in the gradient all_reduce.

Correct diagnosis: a rank stuck outside NCCL (kind "stuck_outside_nccl", culprit rank N//2).
Ranks other than the culprit block in world all_reduce #3 (line `grad_sync`, third time). The
culprit completed all_reduce #2 and is not in NCCL: its main thread waits in the loader's
__next__ (line `loader_wait`), its worker thread in _worker (line `worker_stall`).
"""

import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import scenario_lib as lab  # noqa: E402
import training  # noqa: E402

try:
    import queue
except ImportError:  # pragma: no cover
    import Queue as queue

STEPS = 5
STALL_STEP = 3  # 1-based step whose batch never arrives on the culprit


class PrefetchLoader(object):
    """A DataLoader with one background worker that prefetches batches into a queue."""

    def __init__(self, batches, stall_at=None):
        self._batches = batches
        self._stall_at = stall_at
        self._storage = threading.Event()  # set when the storage answers: never, on the culprit
        self._queue = queue.Queue(maxsize=2)
        self._thread = threading.Thread(target=self._worker, name="loader-worker")
        self._thread.daemon = True
        self._thread.start()

    def _worker(self):
        for i, batch in enumerate(self._batches):
            if i == self._stall_at:
                self._storage.wait()  # site: worker_stall
            self._queue.put(batch)
        self._queue.put(None)

    def __iter__(self):
        return self

    def __next__(self):
        batch = self._queue.get()  # site: loader_wait
        if batch is None:
            raise StopIteration
        return batch

    next = __next__


def culprit_of(world_size):
    return world_size // 2


def prefetching(rank, world_size, loader):
    return PrefetchLoader(list(loader), STALL_STEP - 1 if rank == culprit_of(world_size) else None)


def state_truth(world_size):
    culprit = culprit_of(world_size)
    ranks = training.all_in_grad_sync(world_size, STALL_STEP)
    ranks[culprit] = {"state": "outside_nccl", "callsite": lab.site("loader_wait"),
                      "threads": [lab.site("worker_stall")], "last_collective": training.last_grad_sync(STALL_STEP - 1)}
    return lab.write_truth(
        __file__, "stuck_outside_nccl",
        "Rank %d's data loader worker never delivers batch %d: the rank waits for it outside NCCL "
        "after all_reduce #%d while the others wait in all_reduce #%d." % (culprit, STALL_STEP, STALL_STEP - 1, STALL_STEP),
        world_size, [culprit], lab.world(world_size), STALL_STEP, "all_reduce", ranks)


def main():
    training.run(state_truth, STEPS, training.data_parallel, wrap_loader=prefetching)


if __name__ == "__main__":
    main()
