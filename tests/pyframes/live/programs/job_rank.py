"""One rank of a pretend training job started by job_launcher.py. Every rank loops over
iterations in main(); in its last iteration, ranks other than the outlier block in all_reduce()
(waiting for the outlier) and the outlier blocks in load_batch(), one iteration behind the
others. The rank records its own stack and the repr of main()'s `iteration` (ground truth) and
blocks: arguments are the truth file, the outlier rank and a job token, and optionally
"worker": then the outlier first starts a worker in the manner of a DataLoader worker (a
multiprocessing child, forked: it inherits RANK and LOCAL_RANK), which records its own stack in
TRUTH.worker.json and blocks in worker_loop(); the rank's truth names it ("worker": pid, path)."""
import os
import sys

import stackrecord

RANK = int(os.environ["RANK"])
OUTLIER = int(sys.argv[2])


def all_reduce(iteration):
    stackrecord.hold("main", iteration=repr(iteration))


def load_batch(iteration):
    stackrecord.hold("main", iteration=repr(iteration))


def train_step(iteration):
    if RANK == OUTLIER:
        load_batch(iteration)
    all_reduce(iteration)


def main():
    last = 1004 if RANK == OUTLIER else 1005
    for iteration in range(1000, last + 1):
        if iteration == last:
            train_step(iteration)


def worker_loop(truth_path):
    import ctypes
    import signal
    ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: fork cleared the rank's
    if os.getppid() == 1:
        sys.exit(1)
    sys.argv[1] = truth_path  # stackrecord writes this process's own truth there
    stackrecord.setup(expected=1, rank=RANK, local_rank=int(os.environ["LOCAL_RANK"]), worker_of=os.getppid())
    stackrecord.hold("main")


extra = {}
if RANK == OUTLIER and sys.argv[4:5] == ["worker"]:
    import multiprocessing
    worker_truth = sys.argv[1] + ".worker.json"
    worker = multiprocessing.get_context("fork").Process(target=worker_loop, args=(worker_truth,), daemon=True)
    worker.start()
    extra = {"worker": {"pid": worker.pid, "truth": worker_truth}}
stackrecord.setup(expected=1, rank=RANK, local_rank=int(os.environ["LOCAL_RANK"]), **extra)
main()
