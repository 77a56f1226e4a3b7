#!/usr/bin/env python3
"""Benchmark: pyframes reading an ~80 MB core against `gdb -batch -ex py-bt` on the same core;
prints a markdown table.

    core_bench.py --pyframes BUILD/pyframes/pyframes [--python /usr/bin/python3.11] [--smoke]

The core is a gcore dump of core_bench_target.py (four threads, 40 and 20 Python frames deep,
heap data filling the core to the target size). pyframes: wall time (median and 95th
percentile of many runs) and peak RSS (ru_maxrss of the child, via wait4); gdb: the same over
a few runs (it loads the debug symbols each time, as a user's gdb would). Targets: >= 50x faster
than gdb, <= 20 MB RSS. --smoke makes a small core and few runs (proves the script works; its
numbers mean little). The target process is killed and the core deleted at the end.
"""
import argparse
import ctypes
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
_libc = ctypes.CDLL(None, use_errno=True)


def die_with_parent():
    _libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


def measure(argv, timeout=300):
    """Wall time, peak RSS (KiB) and output of one command."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    output = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status >> 8
    return seconds, usage.ru_maxrss, child.returncode, output.decode("utf-8", "replace")


def make_core(python, megabytes, workdir):
    env = dict(os.environ, MALLOC_ARENA_MAX="1")  # one malloc arena: the core holds data, not reserved space
    target = subprocess.Popen([python, os.path.join(HERE, "core_bench_target.py"), str(megabytes)], env=env,
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, preexec_fn=die_with_parent)
    try:
        if target.stdout.readline().strip() != b"ready":
            raise SystemExit("core_bench: the target did not start")
        prefix = os.path.join(workdir, "bench-core")
        subprocess.run(["gcore", "-o", prefix, str(target.pid)], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True, timeout=300)
        return "%s.%d" % (prefix, target.pid)
    finally:
        target.kill()
        target.wait()


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pyframes", required=True, help="the pyframes CLI (or tests/core/core_probe)")
    parser.add_argument("--python", default="/usr/bin/python3.11")
    parser.add_argument("--size-mb", type=int, default=80)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    size_mb = 12 if args.smoke else args.size_mb
    runs, gdb_runs = (3, 1) if args.smoke else (30, 3)
    reader = [args.pyframes] + (["--stacks"] if os.path.basename(args.pyframes) == "core_probe" else [])

    workdir = tempfile.mkdtemp(prefix="pyframes-core-bench-")
    try:
        # The core's size beyond the heap data is the interpreter, its libraries and the thread
        # stacks; measure it once, then fill up to the target size.
        base = make_core(args.python, 0, workdir)
        base_mb = os.path.getsize(base) / (1 << 20)
        os.unlink(base)
        core = make_core(args.python, max(0, int(round(size_mb - base_mb))), workdir)
        core_mb = os.path.getsize(core) / (1 << 20)

        results = [measure(reader + [core]) for _ in range(runs)]
        failed = [r for r in results if r[2] != 0]
        if failed:
            raise SystemExit("core_bench: %s failed (exit %d): %s" % (" ".join(reader), failed[0][2], failed[0][3]))
        times = [r[0] for r in results]
        rss_mb = max(r[1] for r in results) / 1024.0
        frames = results[0][3].count('"function"') or results[0][3].count("File ") or results[0][3].count(" line ")

        gdb = shutil.which("gdb")
        gdb_times, gdb_rss = [], 0.0
        if gdb:
            for _ in range(gdb_runs):
                seconds, rss, code, output = measure([gdb, "-batch", "-ex", "py-bt", args.python, core])
                if code != 0 or "Traceback (most recent call first)" not in output:
                    raise SystemExit("core_bench: gdb py-bt did not print a Python stack:\n%s" % output[-2000:])
                gdb_times.append(seconds)
                gdb_rss = max(gdb_rss, rss / 1024.0)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    median = statistics.median(times)
    print("### Core files: pyframes vs gdb py-bt (%s, Python %s, %s)\n" % (
        platform.machine(), subprocess.check_output([args.python, "-c", "import platform; print(platform.python_version())"]
                                                   ).decode().strip(), "smoke run" if args.smoke else "%d runs" % runs))
    print("Core: %.1f MB from gcore, 4 threads, 100 Python frames in all.\n" % core_mb)
    print("| reader | wall time (median) | wall time (p95) | peak RSS | threads read |")
    print("|---|---|---|---|---|")
    print("| `pyframes CORE` | %.1f ms | %.1f ms | %.1f MB | all 4 |" % (
        median * 1000, percentile(times, 0.95) * 1000, rss_mb))
    if gdb_times:
        gdb_median = statistics.median(gdb_times)
        print("| `gdb -batch -ex py-bt` | %.0f ms | %.0f ms | %.1f MB | the current one |" % (
            gdb_median * 1000, max(gdb_times) * 1000, gdb_rss))
        speedup = gdb_median / median
        print("\npyframes is %.0fx faster than gdb (target >= 50x: %s) and peaks at %.1f MB RSS (target <= 20 MB: %s)."
              % (speedup, "met" if speedup >= 50 else "NOT met", rss_mb, "met" if rss_mb <= 20 else "NOT met"))
        ok = speedup >= 50 and rss_mb <= 20
    else:
        print("\ngdb is not installed: no comparison (run tests/bench/core_bench.sh, which installs it).")
        ok = rss_mb <= 20
    return 0 if ok or args.smoke else 1


if __name__ == "__main__":
    sys.exit(main())
