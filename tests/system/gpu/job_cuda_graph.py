"""Check 5's job: one all_reduce captured in a CUDA graph and the graph replayed N times (the
replays run on the device without calling NCCL), then a pause longer than a stall limit so a
false hang would show. It checks the numbers and records the capture line and the replays.

    job_cuda_graph.py --replays N --pause S
"""

import os
import sys
import time

import torch
import torch.distributed as dist

import job_truth
from job_group import job_options, join_nccl


def main():
    args = job_options(replays=100, pause=8.0)
    join_nccl()
    world = dist.get_world_size()
    x = torch.ones(1024, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up outside the capture, as PyTorch's graph docs ask
        for _ in range(3):
            dist.all_reduce(x)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    x.fill_(1.0)
    with torch.cuda.graph(graph):
        captured_line = sys._getframe().f_lineno; dist.all_reduce(x)  # noqa: E702 (the call's own line)
    for _ in range(args.replays):
        graph.replay()
    torch.cuda.synchronize()
    want = float(world) ** args.replays
    job_truth.record(file=os.path.basename(__file__), captured_line=captured_line, warmup=3, replays=args.replays,
                     value=float(x[0]), expected=want, pause_from=time.time())
    time.sleep(args.pause)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
