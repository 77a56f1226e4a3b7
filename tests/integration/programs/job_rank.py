"""One rank of a pretend training job started by job_launcher.py. Every rank loops over
iterations in main(); in its last iteration, ranks other than the outlier block in all_reduce()
(waiting for the outlier) and the outlier blocks in load_batch(), one iteration behind the
others. The rank records its own stack and the repr of main()'s `iteration` (ground truth) and
blocks: arguments are the truth file, the outlier rank and a job token."""
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


stackrecord.setup(expected=1, rank=RANK, local_rank=int(os.environ["LOCAL_RANK"]))
main()
