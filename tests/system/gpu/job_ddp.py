"""Check 1's GPU job: a small model trained with DistributedDataParallel on the NCCL backend,
one rank per GPU. DDP's reducer issues the gradient all_reduces from inside backward(), so the
shim's call-site for them is the backward() line (the autograd thread that issues them has no
Python frame: the shim borrows the main thread's); the job records that line and its step count.

    job_ddp.py --steps N
"""

import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

import job_truth
from job_group import job_options, join_nccl


def main():
    args = job_options(steps=200)
    local_rank = join_nccl()
    model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 8)).cuda()
    ddp = DistributedDataParallel(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.01)
    generator = torch.Generator(device="cuda").manual_seed(local_rank)
    backward_line = None
    for step in range(1, args.steps + 1):
        x = torch.randn(32, 64, device="cuda", generator=generator)
        loss = ddp(x).square().mean()
        optimizer.zero_grad()
        backward_line = sys._getframe().f_lineno; loss.backward()  # noqa: E702 (the call's own line)
        optimizer.step()
    torch.cuda.synchronize()
    job_truth.record(file=os.path.basename(__file__), backward_line=backward_line, steps=args.steps,
                     loss=float(loss))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
