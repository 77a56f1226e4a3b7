#!/usr/bin/env python3
"""Benchmark: pyframes against pystack and gdb's py-bt on the same live process; prints a markdown table.

    pyframes_bench.py --pyframes BUILD/pyframes/pyframes [--python /usr/bin/python3.11]
                      [--pystack PATH] [--depths MAIN,WORKER] [--before PYFRAMES] [--no-gdb] [--smoke]

Measures one text dump (wall time: median and 95th percentile of many runs; CPU time, user +
system, which the machine's load changes less; peak RSS from GNU time), the same with --lock,
`pystack remote PID` and `gdb -batch -p PID -ex py-bt` on the same process in the same run, and
one pyframes call reading 64 processes. The target has 4 threads: a main thread MAIN frames deep
and three workers WORKER deep (default 100 and 25). Targets: one dump <= 2 ms wall and <= 10 MB,
>= 40x faster than pystack, >= 100x faster than gdb, 64 processes <= 0.3 s. pystack is given with
--pystack, else found on PATH, next to this Python, or where tests/bench/build_pystack.sh puts it
(~/.cache/hangshim/pystack/bin/pystack); without it that column is empty with the reason. pystack
runs both as `pystack remote PID` (stops the target's threads) and with --no-block (does not, as
pyframes does not). --before times another pyframes build in the same run (runs alternate, so both see the
same load). --smoke runs few repetitions and 4 processes (proves the script works; numbers from it
mean little). Every process started is killed at the end.
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


# One timed run: wall seconds, CPU seconds (user + system), peak RSS of the child (KiB), its exit
# status and output.
Measurement = collections.namedtuple("Measurement", "seconds cpu_seconds rss_kib returncode stdout")


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
    return Measurement(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, child.returncode,
                       output.decode("utf-8", "replace"))


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


def start_targets(python, count, depths=(40, 20)):
    targets = []
    for _ in range(count):
        argv = [python, os.path.join(HERE, "bench_target.py"), "0", str(depths[0]), str(depths[1])]
        targets.append(subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        preexec_fn=die_with_parent, universal_newlines=True))
    for target in targets:
        if target.stdout.readline().strip() != "ready":
            raise SystemExit("bench: a target did not start (%s)" % python)
    return targets


# Where tests/bench/build_pystack.sh puts pystack by default.
BUILT_PYSTACK = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                             "hangshim", "pystack", "bin", "pystack")


def find_pystack(given):
    """The pystack command and None, or None and why there is none: --pystack, else PATH, else
    next to this Python, else build_pystack.sh's default prefix."""
    if given:
        return ([given], None) if os.access(given, os.X_OK) else (None, "%s is not an executable" % given)
    found = (shutil.which("pystack") or shutil.which("pystack", path=os.path.dirname(sys.executable))
             or (BUILT_PYSTACK if os.access(BUILT_PYSTACK, os.X_OK) else None))
    if found:
        return [found], None
    return None, ("pystack is not installed (not on PATH, nor in %s): build it from a bloomberg/pystack "
                  "checkout (v1.7.0) with tests/bench/build_pystack.sh SRC_DIR --nanobind NANOBIND_DIR "
                  "(Debian has no package of it), or pass --pystack PATH" % os.path.dirname(BUILT_PYSTACK))


def pystack_version(pystack):
    """What `pystack --version` says, or "version unknown"."""
    try:
        done = subprocess.run(pystack + ["--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return "version unknown"
    lines = done.stdout.strip().splitlines()
    return lines[-1].strip() if done.returncode == 0 and lines else "version unknown"


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


def median(results, field="seconds"):
    return statistics.median(getattr(r, field) for r in results)


def print_table(header, rows):
    """A blank line, then the rows as a Markdown table; a row's last value (met) is None, True or False."""
    print()
    print("| %s |" % " | ".join(header))
    print("|%s" % ("---|" * len(header)))
    for row in rows:
        met = row[-1]
        print("| %s | %s |" % (" | ".join(str(value) for value in row[:-1]), "" if met is None else ("yes" if met else "NO")))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pyframes", required=True)
    parser.add_argument("--python", default="/usr/bin/python3.11")
    parser.add_argument("--pystack", help="the pystack command (default: found on PATH)")
    parser.add_argument("--depths", default="100,25", help="MAIN,WORKER frames deep (default 100,25)")
    parser.add_argument("--before", help="another pyframes (e.g. main's build) timed alternately with --pyframes")
    parser.add_argument("--no-gdb", action="store_true", help="leave the gdb column out (it takes minutes)")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    depths = [int(d) for d in args.depths.split(",")]
    if len(depths) != 2 or min(depths) < 1:
        raise SystemExit("bench: --depths takes MAIN,WORKER, two positive numbers (e.g. 100,25)")
    runs, other_runs, pystack_count, many = (5, 1, 1, 4) if args.smoke else (200, 5, 20, 64)
    version = subprocess.run([args.python, "-c", "import platform; print(platform.python_version())"],
                             stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout.strip()

    def complete(stdout):  # the deepest thread's innermost frames are there
        return stdout.count("nest (") >= depths[0]

    pystack, pystack_problem = find_pystack(args.pystack)
    pystack_runs = []
    pystack_free_runs = []  # pystack remote --no-block: the target is not stopped, as with pyframes
    pystack_rss = None
    before_runs = []
    targets = start_targets(args.python, 1, depths)
    try:
        pid = str(targets[0].pid)
        # pyframes and pystack alternate, so that both see the same machine load.
        dumps = []
        for round_ in range(runs):
            dumps += repeat([args.pyframes, pid], 1, complete)
            if args.before:
                before_runs += repeat([args.before, pid], 1, complete)
            if pystack and pystack_problem is None and round_ % max(1, runs // pystack_count) == 0:
                for mode, into in (([], pystack_runs), (["--no-block"], pystack_free_runs)):
                    argv = pystack + ["remote"] + mode + [pid]
                    probe = measure(argv)
                    if probe.returncode != 0 or probe.stdout.count("in nest") < depths[0]:
                        pystack_problem = "`%s` failed (status %s): %s" % (
                            " ".join(argv), probe.returncode, probe.stdout.strip().splitlines()[-1:] or "no output")
                        break
                    into.append(probe)
        if pystack_runs and pystack_problem is None:
            pystack_rss = peak_rss(pystack + ["remote", pid], 1)
        rss = peak_rss([args.pyframes, pid], 5)
        locked = repeat([args.pyframes, "--lock", pid], max(3, runs // 4), complete)
        # The start-up floor, measured the same way: exec and exit alone (/bin/true), and each
        # tool's start-up without reading anything (--version), alternating.
        floor, pyframes_start, pystack_start = [], [], []
        for _ in range(max(2, runs // 10)):
            floor += repeat(["/bin/true"], 1, lambda out: True)
            pyframes_start += repeat([args.pyframes, "--version"], 1, lambda out: True)
            if pystack_runs and pystack_problem is None:
                pystack_start += repeat(pystack + ["--version"], 1, lambda out: True)
        gdb_problem = "left out (--no-gdb)" if args.no_gdb else None if shutil.which("gdb") else "gdb is not installed"
        gdb = []
        gdb_rss = None
        if gdb_problem is None:
            gdb_argv = ["gdb", "-batch", "-nx", "-p", pid, "-ex", "thread apply all py-bt"]
            probe = measure(gdb_argv)
            if "nest" not in probe.stdout:
                gdb_problem = "gdb py-bt printed no Python frames (is python3.11-dbg installed?)"
            else:
                gdb = [probe] + repeat(gdb_argv, other_runs - 1, lambda out: "nest" in out)
                gdb_rss = peak_rss(gdb_argv, 1)
    finally:
        for target in targets:
            target.kill()
            target.wait()

    targets = start_targets(args.python, many, depths)
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
    wall_median = statistics.median(wall)
    if rss is None:  # no GNU time: an upper bound that includes the forking Python
        rss, gdb_rss, batch_rss = (max(r.rss_kib for r in rs) if rs else None for rs in (dumps, gdb, batch))
    batch_median = median(batch)

    def fastest(results):
        return ms(min(r.seconds for r in results)) if results else "-"

    def other(results, field="seconds", show=ms):
        return show(median(results, field)) if results else "-"

    rows = [
        ("one dump, wall (median of %d%s)" % (runs, "; pystack %d" % len(pystack_runs) if pystack_runs else ""),
         ms(wall_median), other(pystack_runs), other(gdb), "<= 2 ms",
         wall_median <= 0.002),
        ("one dump, wall (95th percentile)", ms(percentile(wall, 0.95)), "-", "-", "", None),
        # The fastest run: what a run met by no other work costs (a loaded machine's median is
        # mostly waiting for a CPU).
        ("one dump, wall (fastest)", ms(min(wall)), fastest(pystack_runs), fastest(gdb), "", None),
        ("one dump, CPU user+system (median)", ms(median(dumps, "cpu_seconds")), other(pystack_runs, "cpu_seconds"),
         other(gdb, "cpu_seconds"), "", None),
        ("one dump, peak RSS", mib(rss), mib(pystack_rss) if pystack_rss else "-", mib(gdb_rss) if gdb else "-",
         "<= 10 MB", rss * 1024 <= 10 * 1000 * 1000),
        ("one dump with --lock, wall (median of %d)" % len(locked), ms(median(locked)), "-", "-", "", None),
        ("%d processes in one call, wall (median of %d)" % (many, len(batch)), ms(batch_median), "-", "-",
         "<= 0.3 s" if many == 64 else "", batch_median <= 0.3 if many == 64 else None),
        ("%d processes in one call, peak RSS" % many, mib(batch_rss), "-", "-", "", None),
    ]
    rows += [
        ("start-up floor: /bin/true, wall / CPU (median of %d)" % len(floor),
         "%s / %s" % (ms(median(floor)), ms(median(floor, "cpu_seconds"))), "-", "-", "", None),
        ("start-up only: --version, wall (median)", ms(median(pyframes_start)), other(pystack_start), "-", "",
         None),
        ("start-up only: --version, CPU user+system (median)", ms(median(pyframes_start, "cpu_seconds")),
         other(pystack_start, "cpu_seconds"), "-", "", None),
    ]
    if before_runs:
        rows[0:0] = [
            ("before (--before %s): one dump, wall (median of %d)" % (args.before, len(before_runs)),
             ms(median(before_runs)), "-", "-", "", None),
            ("before: one dump, wall (fastest)", ms(min(r.seconds for r in before_runs)), "-", "-", "", None),
            ("before: one dump, CPU user+system (median)", ms(median(before_runs, "cpu_seconds")), "-", "-", "", None),
        ]
    if pystack_runs and pystack_problem is None:
        # pystack remote stops every thread of the target with ptrace (pyframes --lock does too);
        # pystack remote --no-block reads it running, as pyframes does by default.
        after = next(i for i, row in enumerate(rows) if row[0].startswith("one dump, CPU user+system")) + 1
        rows[after:after] = [
            ("one dump, target left running (pystack remote --no-block), wall (median)", ms(wall_median),
             other(pystack_free_runs), "-", "", None),
            ("one dump, target left running (pystack remote --no-block), CPU (median)",
             ms(median(dumps, "cpu_seconds")), other(pystack_free_runs, "cpu_seconds"), "-", "", None),
        ]
        pairs = (("wall, median", median(pystack_runs), wall_median),
                 ("wall, fastest", min(r.seconds for r in pystack_runs), min(wall)),
                 ("CPU, median", median(pystack_runs, "cpu_seconds"), median(dumps, "cpu_seconds")))
        for what, theirs, ours in pairs:
            speedup = theirs / ours
            rows.append(("speedup over pystack remote (%s)" % what, "%.0fx" % speedup, "1x", "-", ">= 40x",
                         speedup >= 40))
        speedup = median(pystack_free_runs) / wall_median
        rows.append(("speedup over pystack remote --no-block (wall, median)", "%.0fx" % speedup, "1x", "-", "",
                     None))
    if gdb:
        speedup = median(gdb) / wall_median
        rows.append(("speedup over gdb py-bt (wall)", "%.0fx" % speedup, "-", "1x", ">= 100x", speedup >= 100))

    load = os.getloadavg()
    print("pyframes benchmark%s: CPython %s (%s), 4 threads %d/%d/%d/%d Python frames deep; %s, %d CPUs, Linux %s, "
          "load average %.2f %.2f %.2f at the end" % (
              " (smoke run)" if args.smoke else "", version, args.python, depths[0], depths[1], depths[1], depths[1],
              platform.processor() or platform.machine(), os.cpu_count(), platform.release(), *load))
    if pystack_problem:
        print("pystack column empty: %s" % pystack_problem)
    elif pystack:
        print("pystack %s (%s): %d runs each of `pystack remote PID` and `pystack remote --no-block PID`, "
              "alternating with pyframes" % (pystack_version(pystack), pystack[0], len(pystack_runs)))
    if gdb_problem:
        print("gdb column empty: %s" % gdb_problem)
    print_table(("measurement", "pyframes", "pystack remote", "gdb -batch -ex py-bt", "target", "met"), rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
