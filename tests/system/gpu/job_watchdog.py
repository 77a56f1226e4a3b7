"""Check 7's job: PyTorch's NCCL watchdog with a short timeout (init_process_group(timeout=...))
meets a collective that never completes on the device (a spinning kernel ahead of it); the
watchdog aborts the communicator and ends the process. The job records the all_reduce's line,
its step and the timeout.

    job_watchdog.py --steps N --timeout S
"""

import datetime
import os
import sys

import torch
import torch.distributed as dist

import job_truth
from job_group import job_options, join_nccl


def main():
    args = job_options(steps=5, timeout=10.0)
    join_nccl(timeout=datetime.timedelta(seconds=args.timeout))
    x = torch.ones(1024, device="cuda")
    for step in range(1, args.steps + 1):
        if step == args.steps:
            torch.cuda._sleep(1 << 40)
            job_truth.record(file=os.path.basename(__file__), hung_step=step, timeout=args.timeout)
        line = sys._getframe().f_lineno; dist.all_reduce(x)  # noqa: E702 (the call's own line)
        if step == 1:
            job_truth.record(line=line)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
