"""A launcher in the manner of torchrun: starts WORLD ranks of job_rank.py (RANK, LOCAL_RANK,
WORLD_SIZE in their environment) and one helper that is not Python (sleep), waits until every
rank has written its ground truth, writes its own (the ranks' pids and truth files), and waits.
Arguments: truth file, world size, outlier rank, job token, and optionally "worker" (passed on
to the ranks: the outlier starts a worker process). Every child dies with it."""
import ctypes
import json
import os
import signal
import subprocess
import sys
import time

truth_path, world, outlier, token = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
extra_args = sys.argv[5:6]
here = os.path.dirname(os.path.abspath(__file__))
libc = ctypes.CDLL(None, use_errno=True)


def die_with_parent():
    libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


children = []
ranks = []
for rank in range(world):
    env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world))
    rank_truth = os.path.join(os.path.dirname(truth_path), "rank%d.json" % rank)
    child = subprocess.Popen([sys.executable, os.path.join(here, "job_rank.py"), rank_truth, str(outlier), token] + extra_args,
                             env=env, stdin=subprocess.DEVNULL, preexec_fn=die_with_parent)
    children.append(child)
    ranks.append({"rank": rank, "pid": child.pid, "truth": rank_truth})
helper = subprocess.Popen(["sleep", "100000"], stdin=subprocess.DEVNULL, preexec_fn=die_with_parent)

deadline = time.time() + 120
while not all(os.path.exists(r["truth"]) for r in ranks):
    if any(child.poll() is not None for child in children) or time.time() > deadline:
        sys.exit("a rank exited or never got ready")
    time.sleep(0.02)
with open(truth_path + ".tmp", "w") as f:
    json.dump({"pid": os.getpid(), "threads": [], "ranks": ranks, "helper": helper.pid}, f)
os.rename(truth_path + ".tmp", truth_path)
while True:
    time.sleep(3600)
