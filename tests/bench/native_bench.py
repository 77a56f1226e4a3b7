#!/usr/bin/env python3
"""Benchmark of `pyframes --native`: a live dump of a 4-thread process, how long the target is
stopped for it, and a core read; prints a markdown table (docs/benchmarks.md's --native row).

    native_bench.py --pyframes BUILD/pyframes/pyframes --ptrace-clock BUILD/tests/bench/ptrace_clock.so
                    [--python /usr/bin/python3.11] [--smoke]

The target is the pyframes benchmark's (bench_target.py: a main thread 40 Python frames deep
and three workers 20 deep, blocked in time.sleep). Wall time is from fork to exit of one
`pyframes --native PID`. The stop is measured in the tracer by the ptrace_clock.so preload:
from its first stopping ptrace request to its last detach. gdb (`thread apply all bt`, the
native stacks only) is measured the same way when installed. Targets: one dump <= 50 ms,
target stopped <= 20 ms. --smoke runs a few repetitions (proves the script works; numbers
from it mean little). Every process started is killed at the end.
"""
import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from pyframes_bench import ms, percentile, print_table, repeat, start_targets  # noqa: E402


def is_static(path):
    """Whether the ELF executable at `path` has no program interpreter (a static link, which
    LD_PRELOAD cannot reach)."""
    import struct
    with open(path, "rb") as f:
        header = f.read(64)
        if header[:4] != b"\x7fELF" or header[4] != 2:
            return False
        phoff, = struct.unpack_from("<Q", header, 32)
        phentsize, phnum = struct.unpack_from("<HH", header, 54)
        f.seek(phoff)
        table = f.read(phentsize * phnum)
    return all(struct.unpack_from("<I", table, i * phentsize)[0] != 3 for i in range(phnum))  # PT_INTERP


def stopped_times(argv, runs, clock, check):
    """For each of `runs` runs of argv: how long the target was stopped (by the ptrace clock)
    and the run's wall time (seconds; the preload adds a little)."""
    with tempfile.NamedTemporaryFile(prefix="ptrace-clock-", delete=False) as f:
        log = f.name
    env = dict(os.environ, LD_PRELOAD=clock, PTRACE_CLOCK_FILE=log)
    walls = []
    try:
        for _ in range(runs):
            started = time.perf_counter()
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  env=env, universal_newlines=True)
            walls.append(time.perf_counter() - started)
            if done.returncode != 0 or not check(done.stdout):
                raise SystemExit("bench: `%s` failed (status %s):\n%s" % (" ".join(argv), done.returncode,
                                                                          done.stdout[-2000:]))
        with open(log) as f:
            lines = [line.split() for line in f if line.strip()]
    finally:
        os.unlink(log)
    if len(lines) != runs:
        raise SystemExit("bench: the ptrace clock logged %d of %d runs of `%s`" % (len(lines), runs, " ".join(argv)))
    return [int(line[0]) / 1e9 for line in lines], walls


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pyframes", required=True)
    parser.add_argument("--ptrace-clock", required=True)
    parser.add_argument("--python", default="/usr/bin/python3.11")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    clock_problem = None
    if is_static(args.pyframes):
        clock_problem = ("%s is linked statically, so the ptrace clock (an LD_PRELOAD) cannot time its stops: "
                         "configure a build with -DHANGSHIM_STATIC_PYFRAMES=OFF and pass its pyframes" % args.pyframes)
    runs, gdb_runs = (5, 1) if args.smoke else (200, 5)
    version = subprocess.run([args.python, "-c", "import platform; print(platform.python_version())"],
                             stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout.strip()

    def merged(stdout):  # every thread's stack, Python frames merged with native ones
        return stdout.count("nest (") >= 100 and stdout.count("[native] ") >= 8 and "not merged" not in stdout

    workdir = tempfile.mkdtemp(prefix="native-bench-")
    targets = start_targets(args.python, 1)
    try:
        pid = str(targets[0].pid)
        plain = repeat([args.pyframes, pid], max(3, runs // 4), lambda out: out.count("nest (") >= 100)
        dumps = repeat([args.pyframes, "--native", pid], runs, merged)
        stops = [] if clock_problem else stopped_times([args.pyframes, "--native", pid], runs, args.ptrace_clock,
                                                       merged)[0]
        gdb_wall, gdb_stops, gdb_problem = [], [], None
        if shutil.which("gdb") is None:
            gdb_problem = "gdb is not installed"
        else:
            gdb_argv = ["gdb", "-batch", "-nx", "-p", pid, "-ex", "thread apply all bt"]
            # gdb names time_sleep only with the interpreter's debug symbols (python3.11-dbg,
            # which the full benchmark installs and a fresh machine lacks): without them its
            # column stays empty, said why, as when gdb is missing.
            probe = subprocess.run(gdb_argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, universal_newlines=True)
            if "time_sleep" not in probe.stdout:
                gdb_problem = "gdb has no debug symbols for %s (install its -dbg package)" % args.python
            else:
                gdb_stops, gdb_wall = stopped_times(gdb_argv, gdb_runs, args.ptrace_clock,
                                                    lambda out: "time_sleep" in out)
        core_prefix = os.path.join(workdir, "core")
        core = None
        if shutil.which("gcore"):
            subprocess.run(["gcore", "-o", core_prefix, pid], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           check=True)
            core = "%s.%s" % (core_prefix, pid)
    finally:
        for target in targets:
            target.kill()
            target.wait()
    try:
        core_reads = repeat([args.pyframes, "--native", core], max(3, runs // 4), merged) if core else []
    finally:
        shutil.rmtree(workdir)

    wall = [r.seconds for r in dumps]
    median = statistics.median(wall)
    stop_median = statistics.median(stops) if stops else None
    rows = [
        ("live dump, 4 threads, wall (median of %d)" % runs, ms(median), ms(statistics.median(r.seconds for r in plain)),
         ms(statistics.median(gdb_wall)) if gdb_wall else "-", "<= 50 ms", median <= 0.050),
        ("live dump, wall (95th percentile)", ms(percentile(wall, 0.95)), "-", "-", "", None),
        ("target stopped (median of %d)" % len(stops), ms(stop_median) if stops else "-", "not stopped",
         ms(statistics.median(gdb_stops)) if gdb_stops else "-", "<= 20 ms",
         stop_median <= 0.020 if stops else None),
        ("target stopped (95th percentile)", ms(percentile(stops, 0.95)) if stops else "-", "-", "-", "", None),
    ]
    if core_reads:
        rows.append(("core of the same process, wall (median of %d)" % len(core_reads),
                     ms(statistics.median(r.seconds for r in core_reads)), "-", "-", "", None))

    print("pyframes --native benchmark%s: CPython %s (%s), target 4 threads / 100 Python frames; %s, %d CPUs, "
          "Linux %s" % (" (smoke run)" if args.smoke else "", version, args.python,
                        platform.processor() or platform.machine(), os.cpu_count(), platform.release()))
    if clock_problem:
        print("pyframes' stops not timed: %s" % clock_problem)
    if gdb_problem:
        print("gdb column empty: %s" % gdb_problem)
    print_table(("measurement", "pyframes --native", "pyframes (Python only)", "gdb -batch -ex 'thread apply all bt'",
                 "target", "met"), rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
