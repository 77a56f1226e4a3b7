#!/usr/bin/env python3
"""Benchmark: pyframes against gdb's py-bt on the same live process; prints a markdown table.

    pyframes_bench.py --pyframes BUILD/pyframes/pyframes [--python /usr/bin/python3.11] [--smoke]

Measures one text dump (wall time: median and 95th percentile of many runs; peak RSS from the
kernel's rusage of the child), the same with --lock, `gdb -batch -p PID -ex py-bt` on the same
process, and one pyframes call reading 64 processes. Targets: one dump <= 10 ms and <= 10 MB,
>= 100x faster than gdb, 64 processes <= 0.3 s. --smoke runs few repetitions and 4 processes
(proves the script works; numbers from it mean little). Every process started is killed at the end.
"""
import argparse
import collections
import ctypes
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
_libc = ctypes.CDLL(None, use_errno=True)


def die_with_parent():
    _libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


# One timed run: wall seconds, peak RSS of the child (KiB), its exit status and output.
Measurement = collections.namedtuple("Measurement", "seconds rss_kib returncode stdout")


def measure(argv, timeout=120):
    """Wall time and ru_maxrss (via wait4) of one command. The kernel folds the pre-exec memory
    of the child into ru_maxrss, which for a child of this Python is this Python's size: use
    peak_rss() for memory."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    output = b""
    deadline = start + timeout
    while True:
        chunk = os.read(child.stdout.fileno(), 1 << 16)
        if not chunk:
            break
        output += chunk
        if time.perf_counter() > deadline:
            child.kill()
            break
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status
    child.stdout.close()
    return Measurement(seconds, usage.ru_maxrss, child.returncode, output.decode("utf-8", "replace"))


def peak_rss(argv, runs):
    """Peak RSS in KiB of a command over `runs` runs, measured by GNU time (a small process, so
    the pre-exec share is its own few hundred KiB), or None without /usr/bin/time."""
    if not os.path.exists("/usr/bin/time"):
        return None
    peak = 0
    for _ in range(runs):
        done = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, universal_newlines=True)
        peak = max(peak, int(done.stderr.strip().splitlines()[-1]))
    return peak


def start_targets(python, count):
    targets = []
    for _ in range(count):
        targets.append(subprocess.Popen([python, os.path.join(HERE, "bench_target.py")], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        preexec_fn=die_with_parent, universal_newlines=True))
    for target in targets:
        if target.stdout.readline().strip() != "ready":
            raise SystemExit("bench: a target did not start (%s)" % python)
    return targets


def repeat(argv, runs, check):
    results = []
    for _ in range(runs):
        result = measure(argv)
        if result.returncode != 0 or not check(result.stdout):
            raise SystemExit("bench: `%s` failed (status %s):\n%s" % (" ".join(argv), result.returncode,
                                                                      result.stdout[-2000:]))
        results.append(result)
    return results


def ms(seconds):
    return "%.1f ms" % (seconds * 1000) if seconds < 1 else "%.2f s" % seconds


def mib(kib):
    return "%.1f MiB" % (kib / 1024.0)


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pyframes", required=True)
    parser.add_argument("--python", default="/usr/bin/python3.11")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    runs, gdb_runs, many = (5, 1, 4) if args.smoke else (200, 5, 64)
    version = subprocess.run([args.python, "-c", "import platform; print(platform.python_version())"],
                             stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout.strip()

    def complete(stdout):  # the deepest thread's innermost frames are there
        return stdout.count("nest (") >= 100

    targets = start_targets(args.python, 1)
    try:
        pid = str(targets[0].pid)
        dumps = repeat([args.pyframes, pid], runs, complete)
        rss = peak_rss([args.pyframes, pid], 5)
        locked = repeat([args.pyframes, "--lock", pid], max(3, runs // 4), complete)
        gdb_problem = None if shutil.which("gdb") else "gdb is not installed"
        gdb = []
        gdb_rss = None
        if gdb_problem is None:
            gdb_argv = ["gdb", "-batch", "-nx", "-p", pid, "-ex", "thread apply all py-bt"]
            probe = measure(gdb_argv)
            if "nest" not in probe.stdout:
                gdb_problem = "gdb py-bt printed no Python frames (is python3.11-dbg installed?)"
            else:
                gdb = [probe] + repeat(gdb_argv, gdb_runs - 1, lambda out: "nest" in out)
                gdb_rss = peak_rss(gdb_argv, 1)
    finally:
        for target in targets:
            target.kill()
            target.wait()

    targets = start_targets(args.python, many)
    try:
        pids = [str(t.pid) for t in targets]
        batch = repeat([args.pyframes, "--no-merge"] + pids, max(3, runs // 20),
                       lambda out: out.count("Process ") == many and complete(out))
        batch_rss = peak_rss([args.pyframes, "--no-merge"] + pids, 3)
    finally:
        for target in targets:
            target.kill()
            target.wait()

    wall = [r.seconds for r in dumps]
    median = statistics.median(wall)
    if rss is None:  # no GNU time: an upper bound that includes the forking Python
        rss, gdb_rss, batch_rss = (max(r.rss_kib for r in rs) if rs else None for rs in (dumps, gdb, batch))
    batch_median = statistics.median(r.seconds for r in batch)
    rows = [
        ("one dump, wall (median of %d)" % runs, ms(median), ms(statistics.median(r.seconds for r in gdb)) if gdb else "-",
         "<= 10 ms", median <= 0.010),
        ("one dump, wall (95th percentile)", ms(percentile(wall, 0.95)), "-", "", None),
        ("one dump, peak RSS", mib(rss), mib(gdb_rss) if gdb else "-", "<= 10 MB", rss * 1024 <= 10 * 1000 * 1000),
        ("one dump with --lock, wall (median of %d)" % len(locked), ms(statistics.median(r.seconds for r in locked)),
         "-", "", None),
        ("%d processes in one call, wall (median of %d)" % (many, len(batch)), ms(batch_median), "-",
         "<= 0.3 s" if many == 64 else "", batch_median <= 0.3 if many == 64 else None),
        ("%d processes in one call, peak RSS" % many, mib(batch_rss), "-", "", None),
    ]
    if gdb:
        speedup = statistics.median(r.seconds for r in gdb) / median
        rows.append(("speedup over gdb py-bt", "%.0fx" % speedup, "1x", ">= 100x", speedup >= 100))

    print("pyframes benchmark%s: CPython %s (%s), target 4 threads / 100 Python frames; %s, %d CPUs, Linux %s" % (
        " (smoke run)" if args.smoke else "", version, args.python, platform.processor() or platform.machine(),
        os.cpu_count(), platform.release()))
    if gdb_problem:
        print("gdb column empty: %s" % gdb_problem)
    print()
    print("| measurement | pyframes | gdb -batch -ex py-bt | target | met |")
    print("|---|---|---|---|---|")
    for name, ours, theirs, goal, met in rows:
        print("| %s | %s | %s | %s | %s |" % (name, ours, theirs, goal, "" if met is None else ("yes" if met else "NO")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
