"""Check 3's GPU job (and check 6's target): a loop of all_reduces, then a spinning kernel
(torch.cuda._sleep) queued ahead of the last one, so NCCL's call returns on the host and the
collective never completes on the device; the job then blocks in torch.cuda.synchronize(). It
records the all_reduce's line, the step it hangs in, when it issued it and where it blocks.

    job_device_hang.py --steps N
"""

import os
import sys
import time

import torch
import torch.distributed as dist

import job_truth
from job_group import job_options, join_nccl

SPIN_CYCLES = 1 << 40  # minutes at any GPU clock: longer than the check waits


def main():
    args = job_options(steps=40)
    join_nccl()
    x = torch.ones(1024, device="cuda")
    for step in range(1, args.steps + 1):
        if step == args.steps:
            torch.cuda._sleep(SPIN_CYCLES)
            job_truth.record(file=os.path.basename(__file__), hung_step=step, issued_at=time.time())
        line = sys._getframe().f_lineno; dist.all_reduce(x)  # noqa: E702 (the call's own line)
        if step == 1:
            job_truth.record(line=line)
    job_truth.record(blocked_line=sys._getframe().f_lineno + 1)
    torch.cuda.synchronize()
    print("job_device_hang.py: the spinning kernel ended before the check did", file=sys.stderr)


if __name__ == "__main__":
    main()
