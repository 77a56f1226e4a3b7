"""The CPU rehearsal's job: a training-like loop of all_reduces on the NCCL stand-in
(tests/system/scenarios/ncclpy.py), on a stream of the stand-in driver so that the shim tracks
completion with CUDA events. With --hang-at K, rank 1 never issues the K-th all_reduce (it
sleeps instead), so rank 0's call returns and its stream never completes it: the stand-in's
version of a collective stuck on the device.

    standin_loop.py --steps N [--hang-at K] [--count C]
"""

import argparse
import os
import sys
import time

import job_truth
import ncclpy as dist


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--hang-at", type=int, default=0)
    p.add_argument("--count", type=int, default=64)
    args = p.parse_args()
    os.environ["HANGSHIM_SCENARIO_STREAM"] = "1"
    dist.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    grad = dist.zeros((args.count,), "float32")
    for step in range(1, args.steps + 1):
        if step == args.hang_at:
            job_truth.record(hung_step=step, issued_at=time.time())
            if rank == 1:
                job_truth.record(sleeping_line=sys._getframe().f_lineno + 1)
                time.sleep(3600)
        line = sys._getframe().f_lineno; dist.all_reduce(grad)  # noqa: E702 (the call's own line)
        if step in (1, args.steps):
            job_truth.record(file=os.path.basename(__file__), line=line, steps=step)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
