"""The CPU rehearsal of check 5's job (job_cuda_graph.py) on the NCCL stand-in: warm-up
all_reduces on a stream of the stand-in driver, one all_reduce captured into a graph on it
(cuStreamBeginCapture ... cuStreamEndCapture), the graph launched N times (no NCCL call), then
a pause longer than the stall limit, so a false hang would show. The stand-in runs the captured
all_reduce once, at capture, and a launch runs nothing: what NCCL and the shim see is what they
see on a GPU (one call, made while the stream captures; none per replay). Records the capture
line and the counts.

    standin_graph.py --replays N --pause S
"""

import argparse
import os
import sys
import time

import job_truth
import ncclpy as dist

WARMUP = 3


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--replays", type=int, required=True)
    p.add_argument("--pause", type=float, required=True)
    args = p.parse_args()
    dist.set_device(int(os.environ["LOCAL_RANK"]))
    dist.init_process_group("nccl")
    stream = dist.Stream()
    dist.set_stream(stream)
    x = dist.zeros((64,), "float32")
    for _ in range(WARMUP):
        dist.all_reduce(x)
    stream.begin_capture()
    captured_line = sys._getframe().f_lineno; dist.all_reduce(x)  # noqa: E702 (the call's own line)
    graph = stream.end_capture()
    for _ in range(args.replays):
        graph.replay()
    stream.synchronize()
    job_truth.record(file=os.path.basename(__file__), captured_line=captured_line, warmup=WARMUP,
                     replays=args.replays, pause_from=time.time())
    time.sleep(args.pause)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
