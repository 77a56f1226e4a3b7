"""Per-call cost of an NCCL collective issued from Python at a given stack depth, for the
shim benchmark (tests/bench/shim_bench.sh). ctypes over the CPU stand-in, bound through the
global scope as a linked extension would be (so an LD_PRELOADed shim sees the calls): one
single-rank communicator, ncclAllReduce of one float, called `--calls` times from a frame
`--depth` Python frames deep. Prints {"depth": D, "calls": N, "ns_per_call": X}, the best of
`--rounds` rounds.

With --pair (run with the shim preloaded) it also times the same loop through pncclAllReduce, NCCL's
profiling name of the same function, which the shim does not wrap: the real call without the shim,
in the same process, rounds taken in turn. It adds {"direct_ns_per_call": Y, "shim_ns": X - Y}.
A Python process runs such a loop in one of two speeds about 1 µs apart (the stand-in's hand-off
to its engine thread, the interpreter's layout), so a difference between two processes can be off
by that much; within one process both loops run at the process's speed.

With --probe LIB (the shim_capture_probe library) it measures the shim's call-site capture
alone, from the same depth, and prints {"depth": D, "calls": N, "capture_ns": X}."""

import argparse
import ctypes
import json
import sys
import time


def at_depth(depth, body):
    """Runs body() with `depth` Python frames on the stack (counting <module>, main, body)."""
    def nest(n):
        if n <= 1:
            return body()
        return nest(n - 1)
    return nest(max(1, depth - 3))


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * 128)]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--depth", type=int, default=50)
    p.add_argument("--calls", type=int, default=50000)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--alternate", action="store_true",
                   help="call from two call-sites in turn (each call's stack differs from the previous one's)")
    p.add_argument("--pair", action="store_true",
                   help="also time pncclAllReduce (not wrapped by the shim) in the same process, rounds in turn")
    p.add_argument("--probe", help="libshim_capture_probe.so: time the call-site capture alone")
    p.add_argument("--ledger", default="/tmp/hangshim-bench-probe.ledger", help="scratch ledger for --probe")
    args = p.parse_args()
    sys.setrecursionlimit(max(1000, args.depth + 100))
    if args.probe:
        probe = ctypes.CDLL(args.probe)
        probe.hangshim_bench_capture.restype = ctypes.c_double
        probe.hangshim_bench_capture.argtypes = [ctypes.c_long, ctypes.c_char_p]

        def measure():
            return min(probe.hangshim_bench_capture(args.calls, args.ledger.encode()) for _ in range(args.rounds))

        ns = at_depth(args.depth, measure)
        if ns < 0:
            raise SystemExit("shim_bench_python: the probe could not capture a call-site (%d)" % ns)
        print(json.dumps({"depth": args.depth, "calls": args.calls, "capture_ns": round(ns, 1)}))
        return
    ctypes.CDLL("libnccl.so.2", mode=ctypes.RTLD_GLOBAL)
    nccl = ctypes.CDLL(None)
    uid = UniqueId()
    comm = ctypes.c_void_p()
    if nccl.ncclGetUniqueId(ctypes.byref(uid)) != 0:
        raise SystemExit("shim_bench_python: ncclGetUniqueId failed")
    init = nccl.ncclCommInitRank
    init.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, UniqueId, ctypes.c_int]
    if init(ctypes.byref(comm), 1, uid, 0) != 0:
        raise SystemExit("shim_bench_python: ncclCommInitRank failed")
    argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                ctypes.c_void_p]
    allreduce = nccl.ncclAllReduce
    allreduce.argtypes = argtypes
    direct = nccl.pncclAllReduce if args.pair else None
    if direct is not None:
        direct.argtypes = argtypes
    value = ctypes.c_float(1.0)
    buf = ctypes.addressof(value)
    c = comm.value

    def one_round(fn):
        start = time.thread_time()  # CPU time: other processes' load is not ours
        if args.alternate:
            for _ in range(args.calls // 2):
                fn(buf, buf, 1, 7, 0, c, None)
                fn(buf, buf, 1, 7, 0, c, None)
        else:
            for _ in range(args.calls):
                fn(buf, buf, 1, 7, 0, c, None)
        return (time.thread_time() - start) / args.calls

    def loop():
        best, best_direct = float("inf"), float("inf")
        for _ in range(args.rounds):
            best = min(best, one_round(allreduce))
            if direct is not None:
                best_direct = min(best_direct, one_round(direct))
        return best, best_direct

    ns, direct_ns = (t * 1e9 for t in at_depth(args.depth, loop))
    out = {"depth": args.depth, "calls": args.calls, "ns_per_call": round(ns, 1)}
    if direct is not None:
        out.update(direct_ns_per_call=round(direct_ns, 1), shim_ns=round(ns - direct_ns, 1))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
