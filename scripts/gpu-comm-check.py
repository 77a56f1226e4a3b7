#!/usr/bin/env python3
"""gpu-comm-check.py: does collective communication work between these ranks at all?

Run it like the training job, under the same launcher and environment:

    torchrun --nproc-per-node=8 gpu-comm-check.py              # one node, NCCL
    torchrun --nnodes=2 --nproc-per-node=8 --rdzv-endpoint=HOST:29500 gpu-comm-check.py
    torchrun --nproc-per-node=2 gpu-comm-check.py --backend gloo   # no GPUs needed

torch < 2.0's torchrun spells it --nproc_per_node (and Debian's torch 1.13 on Python 3.11 also
needs --redirects 1 --tee 1: its default "0" breaks with "'NoneType' object has no attribute
'get'"). Under torchrun each line comes prefixed with the rank's log name ("[default0]:").

Every rank joins the process group (init_process_group over env://: RANK, WORLD_SIZE,
LOCAL_RANK, MASTER_ADDR, MASTER_PORT), all-reduces a tensor of ones, checks that every element
of the sum equals the world size, then meets the others at a barrier, and prints one line:

    rank R/W host H device D: all_reduce OK (sum W) barrier OK in X ms
    rank R/W host H device D: FAIL in STAGE after X ms: ERROR

A rank that does not arrive makes the others fail after --timeout seconds instead of hanging;
a rank stuck in a call that does not return is ended by this script's own watchdog a few
seconds after that (with NCCL, PyTorch's own watchdog may end it first, with its own message).
Exit status: 0 OK; 1 FAIL; 2 usage (no PyTorch, not under a launcher).

Tested for real with --backend gloo: tests/system/torch runs it under Debian's torchrun (PyTorch 1.13,
2 ranks) when python3-torch is installed; its failure paths (a rank that never arrives, a
corrupted sum) run against a small fake `torch` package (tests/scripts/fake_torch: gloo-like
collectives over a shared directory). The calls it makes are plain torch.distributed API
(init_process_group, all_reduce, barrier, destroy_process_group) and torch.cuda device selection;
NCCL on GPUs is not tested here (no GPUs).
"""

import argparse
import datetime
import os
import socket
import sys
import threading
import time

WATCHDOG_GRACE_S = 5.0
REQUIRED_ENV = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="gpu-comm-check.py",
        description="Run under torchrun: every rank all-reduces a tensor of ones and meets at a barrier; "
                    "one line per rank says OK or what failed.",
        epilog="Exit status: 0 OK, 1 FAIL, 2 usage (no PyTorch, not started by a launcher).")
    p.add_argument("--backend", default="nccl", choices=("nccl", "gloo"),
                   help="process group backend (default nccl; gloo works without GPUs)")
    p.add_argument("--timeout", type=float, default=30.0,
                   help="seconds a rank waits for the others in each step before failing (default 30)")
    p.add_argument("--elements", type=int, default=1 << 20,
                   help="number of float32 elements all-reduced (default 1048576, 4 MiB)")
    args = p.parse_args(argv)
    if args.timeout <= 0:
        p.error("--timeout must be a positive number of seconds")
    if args.elements < 1:
        p.error("--elements must be at least 1")
    return args


def usage_error(message):
    print("gpu-comm-check: " + message, file=sys.stderr)
    sys.exit(2)


def launcher_env():
    missing = [name for name in REQUIRED_ENV if not os.environ.get(name)]
    if missing:
        usage_error("%s not set: start it with torchrun (torchrun --nproc-per-node=N gpu-comm-check.py) "
                    "(torch < 2.0: --nproc_per_node) or srun with the torch.distributed variables" % ", ".join(missing))
    try:
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    except ValueError as e:
        usage_error("RANK, WORLD_SIZE and LOCAL_RANK must be numbers: %s" % e)
    if world < 1 or not 0 <= rank < world:
        usage_error("RANK %d is not in 0..WORLD_SIZE-1 (WORLD_SIZE %d)" % (rank, world))
    return rank, world, local_rank


def import_torch():
    try:
        import torch
        import torch.distributed as dist
    except ImportError as e:
        print("gpu-comm-check: PyTorch is not installed for %s: %s (run it with the python of the "
              "training environment)" % (sys.executable, e), file=sys.stderr)
        sys.exit(2)
    return torch, dist


class Check(object):
    """One rank's check: its identity, the stage it is in, and how it prints its verdict."""

    def __init__(self, rank, world, device):
        self.prefix = "rank %d/%d host %s device %s" % (rank, world, socket.gethostname(), device)
        self.stage = "init_process_group"
        self.start = time.monotonic()
        self.deadline = None  # when the watchdog gives up on the current stage
        self.lock = threading.Lock()
        self.done = False

    def enter(self, stage, seconds):
        """Starts a stage that must end within `seconds`."""
        self.stage = stage
        self.deadline = time.monotonic() + seconds

    def elapsed_ms(self):
        return (time.monotonic() - self.start) * 1000.0

    def finish(self, line):
        """Prints the rank's one line, once (the watchdog and the main thread may race)."""
        with self.lock:
            if self.done:
                return False
            self.done = True
            print(line, flush=True)
            return True

    def fail(self, error):
        return self.finish("%s: FAIL in %s after %.0f ms: %s" % (self.prefix, self.stage, self.elapsed_ms(), error))


def start_watchdog(check, seconds):
    """Ends a rank stuck in a call that never returns (and never times out) with a FAIL line:
    `seconds` after its current stage began."""

    def watch():
        while not check.done:
            time.sleep(0.2)
            if time.monotonic() > check.deadline and \
                    check.fail("no answer after %.0f s (a rank did not arrive, or the transport is stuck)" % seconds):
                os._exit(1)

    thread = threading.Thread(target=watch, name="gpu-comm-check-watchdog")
    thread.daemon = True
    thread.start()


def pick_device(torch, backend, local_rank):
    if backend == "gloo":
        return "cpu", "cpu"
    if not torch.cuda.is_available():
        usage_error("CUDA is not available to PyTorch here (no GPU, or a CPU-only build): use --backend gloo")
    count = torch.cuda.device_count()
    if local_rank >= count:
        usage_error("LOCAL_RANK %d but only %d GPU(s) are visible (CUDA_VISIBLE_DEVICES?)" % (local_rank, count))
    torch.cuda.set_device(local_rank)
    return "cuda:%d" % local_rank, "cuda:%d (%s)" % (local_rank, torch.cuda.get_device_name(local_rank))


def run(args):
    torch, dist = import_torch()
    rank, world, local_rank = launcher_env()
    device, device_text = pick_device(torch, args.backend, local_rank)
    check = Check(rank, world, device_text)
    # Each step is bounded by the timeout; the watchdog allows a few seconds more.
    limit = args.timeout + WATCHDOG_GRACE_S
    check.enter("init_process_group", limit)
    start_watchdog(check, limit)
    try:
        dist.init_process_group(backend=args.backend, init_method="env://", rank=rank, world_size=world,
                                timeout=datetime.timedelta(seconds=args.timeout))
        check.enter("all_reduce", limit)
        check.start = time.monotonic()
        tensor = torch.ones(args.elements, dtype=torch.float32, device=device)
        dist.all_reduce(tensor)
        low, high = tensor.min().item(), tensor.max().item()
        if low != world or high != world:
            check.fail("all_reduce gave elements from %g to %g, expected %d everywhere (data corrupted in transit?)"
                       % (low, high, world))
            return 1
        check.enter("barrier", limit)
        if device == "cpu":
            dist.barrier()
        else:
            dist.barrier(device_ids=[local_rank])
        if device != "cpu":
            torch.cuda.synchronize()
        check.finish("%s: all_reduce OK (sum %d) barrier OK in %.1f ms" % (check.prefix, world, check.elapsed_ms()))
    except Exception as e:  # any failure of the transport is this rank's verdict, not a traceback
        check.fail("%s: %s" % (type(e).__name__, " ".join(str(e).split())))
        return 1
    finally:
        if check.stage != "init_process_group" and dist.is_initialized():
            try:
                dist.destroy_process_group()
            except Exception:  # teardown after a failure may fail too; the verdict is printed
                pass
    return 0


def main(argv):
    return run(parse_args(argv))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
