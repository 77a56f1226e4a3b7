"""A small job for the demo: a launcher (like torchrun) starts 8 ranks of a pretend training
loop. Ranks 0-5 wait in all_reduce of iteration 1005; rank 6 waits in all_reduce of iteration
1004 (one collective behind: the same line, another iteration); rank 7 is stuck loading its
batch. Run `python3 demo_job.py`, then `pyframes --locals --children PID_OF_IT`."""
import os
import subprocess
import sys
import time


def all_reduce(batch, iteration):
    while True:  # stands in for a collective that waits for the missing ranks
        time.sleep(1)


def load_batch(rank, iteration):
    if rank == 7 and iteration == 1004:
        while True:  # stands in for a data loader that never delivers
            time.sleep(1)
    return [iteration] * 4


def train(rank):
    last = 1004 if rank >= 6 else 1005
    for iteration in range(1000, 2000):
        batch = load_batch(rank, iteration)
        if iteration == last:
            all_reduce(batch, iteration)


if "RANK" in os.environ:
    train(int(os.environ["RANK"]))
else:
    ranks = [subprocess.Popen([sys.executable, __file__], env=dict(os.environ, RANK=str(r), LOCAL_RANK=str(r)))
             for r in range(8)]
    for rank in ranks:
        rank.wait()
