"""Check 4's job: all_reduces with PyTorch's Flight Recorder on (TORCH_NCCL_TRACE_BUFFER_SIZE,
set by the check), then each rank dumps it through PyTorch's own API into the directory given,
named as PyTorch names the files (nccl_trace_rank_<rank>).

    job_flight_recorder.py --calls N --dump-dir DIR
"""

import argparse
import os
import sys

import torch
import torch.distributed as dist

import job_truth
from job_group import join_nccl


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--calls", type=int, default=20)
    p.add_argument("--dump-dir", required=True)
    args = p.parse_args()
    join_nccl()
    x = torch.ones(256, device="cuda")
    for _ in range(args.calls):
        line = sys._getframe().f_lineno; dist.all_reduce(x)  # noqa: E702 (the call's own line)
    torch.cuda.synchronize()
    dump = torch._C._distributed_c10d._dump_nccl_trace(includeCollectives=True, includeStackTraces=True, onlyActive=False)
    path = os.path.join(args.dump_dir, "nccl_trace_rank_%d" % dist.get_rank())
    with open(path, "wb") as f:
        f.write(dump)
    job_truth.record(file=os.path.basename(__file__), line=line, calls=args.calls, dump=path, torch=torch.__version__)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
