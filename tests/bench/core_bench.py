#!/usr/bin/env python3
"""Benchmark: pyframes reading an ~80 MB core against `gdb -batch -ex py-bt` on the same core;
prints a markdown table.

    core_bench.py --pyframes BUILD/pyframes/pyframes [--python /usr/bin/python3.11] [--smoke]

The core is a gcore dump of bench_target.py MEGABYTES (four threads, 40 and 20 Python frames deep,
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


def measure(argv):
    """Wall time, exit status and output of one command."""
    start = time.perf_counter()
    run = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    return time.perf_counter() - start, run.returncode, run.stdout.decode("utf-8", "replace")


def peak_rss_mb(argv, workdir):
    """Peak RSS of a command, measured by GNU time. (rusage read from Python would include the
    RSS of the forked Python process itself, which exec carries into the child's maximum.)"""
    if not os.access("/usr/bin/time", os.X_OK):
        return None
    out = os.path.join(workdir, "rss")
    subprocess.run(["/usr/bin/time", "-f", "%M", "-o", out] + argv, stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300, check=True)
    with open(out) as f:
        return int(f.read().split()[-1]) / 1024.0


def make_core(python, megabytes, workdir):
    env = dict(os.environ, MALLOC_ARENA_MAX="1")  # one malloc arena: the core holds data, not reserved space
    target = subprocess.Popen([python, os.path.join(HERE, "bench_target.py"), str(megabytes)], env=env,
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
    parser.add_argument("--pyframes", required=True, help="the pyframes CLI (or tests/pyframes/core/core_probe)")
    parser.add_argument("--python", default="/usr/bin/python3.11")
    parser.add_argument("--size-mb", type=int, default=80)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    size_mb = 12 if args.smoke else args.size_mb
    runs, gdb_runs = (3, 1) if args.smoke else (30, 3)
    probe = os.path.basename(args.pyframes) == "core_probe"  # the library-level driver of tests/pyframes/core

    workdir = tempfile.mkdtemp(prefix="pyframes-core-bench-")
    try:
        # The core's size beyond the heap data is the interpreter, its libraries and the thread
        # stacks; measure it once, then fill up to the target size.
        base = make_core(args.python, 0, workdir)
        base_mb = os.path.getsize(base) / (1 << 20)
        os.unlink(base)
        core = make_core(args.python, max(0, int(round(size_mb - base_mb))), workdir)
        core_mb = os.path.getsize(core) / (1 << 20)

        reader = [args.pyframes, core] + (["--stacks"] if probe else [])
        results = [measure(reader) for _ in range(runs)]
        failed = [r for r in results if r[1] != 0]
        if failed:
            raise SystemExit("core_bench: %s failed (exit %d): %s" % (" ".join(reader), failed[0][1], failed[0][2]))
        times = [r[0] for r in results]
        rss = [peak_rss_mb(reader, workdir) for _ in range(3)]
        rss_mb = None if None in rss else max(rss)

        gdb = shutil.which("gdb")
        gdb_times, gdb_rss = [], None
        if gdb:
            gdb_argv = [gdb, "-batch", "-ex", "py-bt", args.python, core]
            for _ in range(gdb_runs):
                seconds, code, output = measure(gdb_argv)
                if code != 0 or "Traceback (most recent call first)" not in output:
                    if not args.smoke:
                        raise SystemExit("core_bench: gdb py-bt printed no Python stack (is python3.11-dbg "
                                         "installed?):\n%s" % output[-2000:])
                    print("note: gdb py-bt printed no Python stack (python3.11-dbg missing?): no comparison")
                    break
                gdb_times.append(seconds)
            if gdb_times:
                gdb_rss = peak_rss_mb(gdb_argv, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    median = statistics.median(times)
    label = "core_probe CORE --stacks" if probe else "pyframes CORE"
    show_rss = (lambda mb: "n/a" if mb is None else "%.1f MB" % mb)
    version = subprocess.check_output([args.python, "-c", "import platform; print(platform.python_version())"])
    print("### Core files: pyframes vs gdb py-bt (%s, Python %s, %s)\n" % (
        platform.machine(), version.decode().strip(), "smoke run" if args.smoke else "%d runs" % runs))
    print("Core: %.1f MB from gcore of %s, 4 threads, 100 Python frames in all.\n" % (core_mb, args.python))
    print("| reader | wall time (median) | wall time (p95) | peak RSS | threads read |")
    print("|---|---|---|---|---|")
    print("| `%s` | %.1f ms | %.1f ms | %s | all 4 |" % (
        label, median * 1000, percentile(times, 0.95) * 1000, show_rss(rss_mb)))
    rss_ok = rss_mb is not None and rss_mb <= 20
    if gdb_times:
        gdb_median = statistics.median(gdb_times)
        print("| `gdb -batch -ex py-bt` | %.0f ms | %.0f ms | %s | the current one |" % (
            gdb_median * 1000, max(gdb_times) * 1000, show_rss(gdb_rss)))
        speedup = gdb_median / median
        print("\npyframes is %.0fx faster than gdb (target >= 50x: %s) and peaks at %s RSS (target <= 20 MB: %s)."
              % (speedup, "met" if speedup >= 50 else "NOT met", show_rss(rss_mb), "met" if rss_ok else "NOT met"))
        ok = speedup >= 50 and rss_ok
    else:
        print("\ngdb is not installed: no comparison (run tests/bench/core_bench.sh, which installs it).")
        ok = rss_ok
    return 0 if ok or args.smoke else 1

if __name__ == "__main__":
    sys.exit(main())
