"""Check 2's job: N small all_reduces back to back, timed by the job itself (wall time of the
loop, the device synchronised at the end), written to its truth file as seconds per call.
GPU: torch.distributed on NCCL, one float32 element. Rehearsal: ncclpy on the stand-in.

    job_allreduce_bench.py --calls N
"""

import argparse
import os
import time

import job_truth


def torch_loop(calls):
    import torch
    import torch.distributed as dist
    from job_group import join_nccl  # torch only in this mode
    join_nccl()
    x = torch.ones(1, device="cuda")
    for _ in range(100):  # warm-up: communicator set-up, NCCL's first launches
        dist.all_reduce(x)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    dist.destroy_process_group()
    return elapsed, 100


def standin_loop(calls):
    import ncclpy as dist
    dist.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("nccl")
    x = dist.zeros((1,), "float32")
    for _ in range(10):
        dist.all_reduce(x)
    start = time.perf_counter()
    for _ in range(calls):
        dist.all_reduce(x)
    elapsed = time.perf_counter() - start
    dist.destroy_process_group()
    return elapsed, 10


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--calls", type=int, required=True)
    args = p.parse_args()
    loop = torch_loop if os.environ.get("GPU_CHECK_MODE") == "gpu" else standin_loop
    elapsed, warmup = loop(args.calls)
    job_truth.record(calls=args.calls, warmup=warmup, seconds=elapsed, per_call_us=elapsed / args.calls * 1e6)


if __name__ == "__main__":
    main()
