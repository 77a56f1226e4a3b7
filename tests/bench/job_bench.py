#!/usr/bin/env python3
"""Benchmark of pyframes' whole-job views; prints a markdown table (docs/benchmarks.md).

    job_bench.py --pyframes BUILD/pyframes/pyframes [--python /usr/bin/python3.11] [--smoke]

1. A launcher starts 64 ranks (bench_target.py: 4 threads, 100 Python frames, RANK set) and
   `pyframes --children LAUNCHER` reads and merges them (target <= 0.3 s), also as --json and
   with --all-threads --locals.
2. 1024 synthetic `pyframes --json` dumps (one real dump of a rank, copied with other ranks,
   pids and thread ids; every 100th rank at another line) merged by `pyframes --merge-json`
   (target <= 1 s), also as --json.
Wall time from fork to exit (median); peak RSS by GNU time when /usr/bin/time exists. --smoke
runs 4 ranks and 16 dumps once (proves the script works). Every process started is killed.
"""
import argparse
import copy
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def die_with_parent():
    import ctypes
    ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


def launch(python, ranks):
    """The launcher itself (run as `job_bench.py --launch N --python P`): starts the ranks,
    prints "ready" once all are, then waits to be killed."""
    children = []
    for rank in range(ranks):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank % 8), WORLD_SIZE=str(ranks))
        children.append(subprocess.Popen([python, os.path.join(HERE, "bench_target.py")], env=env,
                                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                         universal_newlines=True, preexec_fn=die_with_parent))
    for child in children:
        if child.stdout.readline().strip() != "ready":
            sys.exit("a rank did not start")
    print("ready", flush=True)
    while True:
        time.sleep(3600)


def run(argv, timeout=120):
    start = time.perf_counter()
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=timeout)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit("job_bench: `%s` failed (status %d): %s" % (
            " ".join(argv[:6]), done.returncode, done.stderr.decode("utf-8", "replace")[-2000:]))
    return seconds, done.stdout.decode("utf-8")


def median_of(argv, runs, check):
    times = []
    for _ in range(runs):
        seconds, out = run(argv)
        problem = check(out)
        if problem:
            raise SystemExit("job_bench: `%s`: %s" % (" ".join(argv[:6]), problem))
        times.append(seconds)
    return statistics.median(times)


def peak_rss_kib(argv):
    if not os.path.exists("/usr/bin/time"):
        return None
    done = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, universal_newlines=True)
    return int(done.stderr.strip().splitlines()[-1])


def synthetic_dumps(document, count, directory):
    """`count` copies of a one-process document as ranks 0..count-1, every 100th rank (and rank
    count-1) with its main thread's innermost frame at another line."""
    paths = []
    template = document["processes"][0]
    for rank in range(count):
        process = copy.deepcopy(template)
        process["pid"] = 200000 + rank
        process["source"] = "pid %d" % process["pid"]
        process["rank"] = str(rank)
        process["local_rank"] = str(rank % 8)
        for index, thread in enumerate(process["threads"]):
            thread["native_id"] = process["pid"] + index
            thread["thread_id"] = 0x7f0000000000 + rank * 0x100000 + index * 0x1000
        if rank % 100 == 99 or rank == count - 1:
            main = [t for t in process["threads"] if t["name"] == "MainThread"][0]
            innermost = main["frames"][0]
            innermost["line"] += 1
            if "end_line" in innermost:  # 3.11+ documents carry the source range: move it along
                innermost["end_line"] += 1
        path = os.path.join(directory, "rank%04d.json" % rank)
        with open(path, "w") as f:
            json.dump({"processes": [process]}, f)
        paths.append(path)
    return paths


def ms(seconds):
    return "%.0f ms" % (seconds * 1000)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pyframes")
    parser.add_argument("--python", default="/usr/bin/python3.11")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--launch", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.launch:
        return launch(args.python, args.launch)
    if not args.pyframes:
        parser.error("--pyframes is required")
    ranks, dumps, runs = (4, 16, 1) if args.smoke else (64, 1024, 10)
    version = subprocess.run([args.python, "-c", "import platform; print(platform.python_version())"],
                             stdout=subprocess.PIPE, universal_newlines=True, check=True).stdout.strip()
    pyframes = args.pyframes

    launcher = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--launch", str(ranks), "--python",
                                 args.python], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                universal_newlines=True, preexec_fn=die_with_parent)
    rows = []
    try:
        if launcher.stdout.readline().strip() != "ready":
            raise SystemExit("job_bench: the launcher did not start its ranks")
        children = ["--children", str(launcher.pid)]
        label = "ranks 0-%d" % (ranks - 1)

        def merged_all(out):
            return None if "%d processes (%s)" % (ranks, label) in out else "not all ranks merged: " + out[:300]

        live = median_of([pyframes] + children, runs, merged_all)
        rows.append(("%d live processes merged (`--children`), wall (median of %d)" % (ranks, runs), ms(live),
                     "<= 0.3 s" if ranks == 64 else "", live <= 0.3 if ranks == 64 else None))
        rows.append(("same, peak RSS", "%.1f MiB" % (peak_rss_kib([pyframes] + children) / 1024.0)
                     if os.path.exists("/usr/bin/time") else "-", "", None))
        live_json = median_of([pyframes, "--json"] + children, runs, lambda out: None if '"merged"' in out else "no tree")
        rows.append(("same with `--json`", ms(live_json), "", None))
        everything = median_of([pyframes, "--all-threads", "--locals"] + children, runs, merged_all)
        rows.append(("same with `--all-threads --locals`", ms(everything), "", None))

        _, one = run([pyframes, "--json"] + children)
        document = json.loads(one)
        document = {"processes": document["processes"][:1]}
    finally:
        launcher.kill()
        launcher.wait()

    with tempfile.TemporaryDirectory(prefix="job-bench-") as directory:
        paths = synthetic_dumps(document, dumps, directory)
        size = sum(os.path.getsize(p) for p in paths)

        def merged_dumps(out):
            want = "%d processes (ranks 0-%d)" % (dumps, dumps - 1)
            return None if want in out else "not all dumps merged: " + out[:300]

        merged = median_of([pyframes, "--merge-json"] + paths, runs, merged_dumps)
        rows.append(("%d saved JSON dumps (%.1f MB) merged (`--merge-json`), wall (median of %d)" % (
            dumps, size / 1e6, runs), ms(merged), "<= 1 s" if dumps == 1024 else "", merged <= 1.0 if dumps == 1024 else None))
        rows.append(("same, peak RSS", "%.1f MiB" % (peak_rss_kib([pyframes, "--merge-json"] + paths) / 1024.0)
                     if os.path.exists("/usr/bin/time") else "-", "", None))
        merged_json = median_of([pyframes, "--merge-json", "--json"] + paths, runs,
                                lambda out: None if '"merged"' in out else "no tree")
        rows.append(("same with `--json`", ms(merged_json), "", None))

    print("pyframes whole-job benchmark%s: CPython %s (%s), ranks of 4 threads / 100 Python frames; %s, %d CPUs, "
          "Linux %s" % (" (smoke run)" if args.smoke else "", version, args.python,
                        platform.processor() or platform.machine(), os.cpu_count(), platform.release()))
    print()
    print("| measurement | pyframes | target | met |")
    print("|---|---|---|---|")
    for name, value, goal, met in rows:
        print("| %s | %s | %s | %s |" % (name, value, goal, "" if met is None else ("yes" if met else "NO")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
