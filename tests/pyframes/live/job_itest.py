#!/usr/bin/env python3
"""Integration tests of pyframes' whole-job views against real interpreters.

    job_itest.py --pyframes BUILD/pyframes/pyframes --python /path/to/python3 --group job

Groups (one ctest each per interpreter):
  job     a launcher (programs/job_launcher.py) starts 8 ranks with RANK/LOCAL_RANK, seven block
          in all_reduce() and rank 7 in load_batch(), one iteration behind, plus a helper that is
          not Python: --children LAUNCHER and --pgrep find exactly the ranks, the merged view
          (text and JSON) names the outlier first and every branch matches the ranks' own
          records, --locals shows the iteration of each rank, saved dumps merge (--merge-json)
  locals  --locals against sys._getframe().f_locals for ints (small, huge), floats, bools, None,
          str (ASCII, non-ASCII, 10 MB), bytes, tuples, lists (self-containing), dicts; each at
          its id(); --globals: the module's globals and the builtins against f_globals and
          vars(builtins) (the same names, each at its id(), Python's repr for simple values)
  workers a launcher starts 2 ranks; rank 1 starts a worker as a DataLoader does (a forked
          multiprocessing child that inherits RANK): --children counts 2 ranks and names the
          worker as rank 1's worker with its pid (merged header, summary, JSON "worker_of"), and
          the worker's own heading says whose worker it is; each checked against the records
  states  thread states against what each thread of the program is doing: idle in sleep, a
          lock or an Event; holding the GIL while spinning; running without the GIL in hashlib;
          waiting for the GIL while another thread holds it in a C call (ctypes.PyDLL)
Ground truth comes from the programs themselves; every process started is killed at the end.
"""
import json
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from itest_checks import compare_frames, frame_text, python_frames, run_pyframes  # noqa: E402
from itest_targets import wait_asleep  # noqa: E402
from self_recording import TargetError, wait_truth  # noqa: E402
from job_checks import check_locals, check_namespace, merged_problems, sample_states  # noqa: E402
from pyframes_itest import run_group  # noqa: E402

WORLD = 8
OUTLIER = 7


def start_job(targets, workdir):
    token = "job-%d-%d" % (os.getpid(), int(time.time() * 1000))
    launcher = targets.start("job_launcher.py", [str(WORLD), str(OUTLIER), token])
    launcher.wait_ready(timeout=120.0)
    ranks = []
    for entry in launcher.truth["ranks"]:
        with open(entry["truth"], encoding="utf-8") as f:
            truth = json.load(f)
        wait_asleep(entry["pid"], [t["native_id"] for t in truth["threads"]], "rank %d" % entry["rank"], 60.0)
        ranks.append({"rank": entry["rank"], "pid": entry["pid"], "truth": truth})
    return launcher, ranks, token


def group_job(report, args, targets, workdir):
    launcher, ranks, token = start_job(targets, workdir)
    pids = sorted(r["pid"] for r in ranks)
    by_pid = {r["pid"]: r for r in ranks}

    # Text: --children of the launcher (the helper `sleep` is skipped without a word).
    run = run_pyframes(args.pyframes, ["--children", launcher.pid])
    problems = [run.describe()] if run.returncode != 0 or run.stderr else []
    outlier = [r for r in ranks if r["rank"] == OUTLIER][0]
    others = [r for r in ranks if r["rank"] != OUTLIER]
    if not problems:
        lines = run.stdout.split("\n")
        want_header = "%d processes (ranks 0-%d): main threads merged, outermost frame first" % (WORLD, WORLD - 1)
        if lines[0] != want_header:
            problems.append("header %r != %r" % (lines[0], want_header))
        summary = [line for line in lines[1:5] if line.startswith("  rank")]
        want = [("rank %d" % OUTLIER, outlier), ("ranks 0-%d" % (WORLD - 2), others[0])]
        for index, (label, record) in enumerate(want):
            frame = record["truth"]["threads"][0]["frames"][0]
            if index >= len(summary) or not summary[index].lstrip().startswith(label + " ") or \
                    frame_text(frame) not in summary[index]:
                problems.append("summary row %d should name %s at %s: %r" % (
                    index, label, frame_text(frame), summary[index] if index < len(summary) else None))
        first = run.stdout.find("├─ rank %d (idle):" % OUTLIER)
        second = run.stdout.find("└─ ranks 0-%d (idle):" % (WORLD - 2))
        if first < 0 or second < 0 or first > second:
            problems.append("the tree does not split into rank %d (first) and ranks 0-%d: %s" % (
                OUTLIER, WORLD - 2, run.stdout[:3000]))
    report.result("--children LAUNCHER: merged text names rank %d first" % OUTLIER, problems,
                  "%.0f ms" % (run.seconds * 1000))

    # Every rank is hung in a wait (idle): --hide-idle must still show each rank's main thread,
    # and --idle (py-spy's "include idle threads") hide nothing.
    problems = []
    for flag in ("--hide-idle", "--idle"):
        run = run_pyframes(args.pyframes, [flag, "--children", launcher.pid])
        if run.returncode != 0 or run.stderr:
            problems.append(run.describe())
            continue
        want_header = "%d processes (ranks 0-%d): main threads merged" % (WORLD, WORLD - 1)
        if not run.stdout.startswith(want_header):
            problems.append("%s: header %r, expected %r" % (flag, run.stdout.split("\n")[0], want_header))
        if "hidden" in run.stdout.split("\n\n")[0] or "left out" in run.stdout:
            problems.append("%s hid a thread of a hung rank: %s" % (flag, run.stdout[:600]))
        run = run_pyframes(args.pyframes, ["--json", flag, "--children", launcher.pid])
        merged = json.loads(run.stdout).get("merged", {}) if run.returncode == 0 else {}
        if merged.get("processes") != WORLD or merged.get("left_out") != [] or merged.get("hidden_idle_threads") != 0:
            problems.append("%s --json: processes %s, left_out %s, hidden %s" % (
                flag, merged.get("processes"), merged.get("left_out"), merged.get("hidden_idle_threads")))
    report.result("--hide-idle and --idle keep every hung rank's main thread", problems)

    # JSON: the same processes, and every branch of the tree is what the ranks recorded.
    for selection in (["--children", launcher.pid], ["--pgrep", r"job_rank\.py .* %s$" % token]):
        run = run_pyframes(args.pyframes, ["--json"] + selection)
        problems = [run.describe()] if run.returncode != 0 or run.stderr else []
        if not problems:
            document = json.loads(run.stdout)
            got = sorted(p["pid"] for p in document.get("processes", []))
            if got != pids:
                problems.append("processes %s, expected the ranks %s" % (got, pids))
            for process in document.get("processes", []):
                record = by_pid.get(process["pid"])
                if record is not None and (process.get("rank") != str(record["rank"]) or
                                           process.get("local_rank") != str(record["truth"]["local_rank"])):
                    problems.append("pid %d: rank %r/%r, expected %d" % (
                        process["pid"], process.get("rank"), process.get("local_rank"), record["rank"]))
            problems += merged_problems(document.get("merged"), by_pid, OUTLIER)
        report.result("%s: --json processes and merged tree" % selection[0], problems)

    # --locals: main()'s iteration differs for the outlier, on the frame all ranks share.
    run = run_pyframes(args.pyframes, ["--locals", "--children", launcher.pid])
    problems = [run.describe()] if run.returncode != 0 else []
    want = "iteration = %s (rank %d) | %s (ranks 0-%d)" % (
        outlier["truth"]["threads"][0]["iteration"], OUTLIER, others[0]["truth"]["threads"][0]["iteration"], WORLD - 2)
    if not problems and want not in run.stdout:
        problems.append("%r not in the merged text: %s" % (want, run.stdout[:4000]))
    report.result("--locals: the iteration of each rank in main()", problems)

    # Saved dumps, one per rank as if from different nodes, merged later.
    dumps = []
    for record in ranks:
        run = run_pyframes(args.pyframes, ["--json", record["pid"]])
        path = os.path.join(workdir, "rank%d.json" % record["rank"])
        with open(path, "w", encoding="utf-8") as f:
            f.write(run.stdout)
        dumps.append(path)
    run = run_pyframes(args.pyframes, ["--merge-json", "--json"] + dumps)
    problems = [run.describe()] if run.returncode != 0 or run.stderr else []
    if not problems:
        problems += merged_problems(json.loads(run.stdout).get("merged"), by_pid, OUTLIER)
    text = run_pyframes(args.pyframes, ["--merge-json"] + dumps)
    if "├─ rank %d (idle):" % OUTLIER not in text.stdout:
        problems.append("--merge-json text does not name rank %d first: %s" % (OUTLIER, text.stdout[:2000]))
    report.result("--merge-json of %d saved dumps" % len(dumps), problems)


def group_workers(report, args, targets, workdir):
    token = "workers-%d-%d" % (os.getpid(), int(time.time() * 1000))
    launcher = targets.start("job_launcher.py", ["2", "1", token, "worker"])
    launcher.wait_ready(timeout=120.0)
    ranks = {}
    for entry in launcher.truth["ranks"]:
        with open(entry["truth"], encoding="utf-8") as f:
            ranks[entry["rank"]] = json.load(f)
    worker_entry = ranks[1].get("worker")
    if worker_entry is None:
        raise TargetError("rank 1 recorded no worker: %r" % ranks[1])
    worker = wait_truth(None, worker_entry["truth"], "rank 1's worker", None, 60.0)
    for label, truth in (("rank 0", ranks[0]), ("rank 1", ranks[1]), ("rank 1's worker", worker)):
        wait_asleep(truth["pid"], [t["native_id"] for t in truth["threads"]], label, 60.0)
    rank1, worker_pid = ranks[1]["pid"], worker["pid"]
    if worker["worker_of"] != rank1 or worker["rank"] != 1:
        raise TargetError("the worker's record %r does not name rank 1 (pid %d)" % (worker, rank1))
    worker_frame = frame_text(worker["threads"][0]["frames"][0])

    run = run_pyframes(args.pyframes, ["--children", launcher.pid])
    problems = [run.describe()] if run.returncode != 0 or run.stderr else []
    if not problems:
        lines = run.stdout.split("\n")
        want = "3 processes (ranks 0-1, rank 1 worker pid %d): main threads merged, outermost frame first" % worker_pid
        if lines[0] != want:
            problems.append("header %r != %r" % (lines[0], want))
        rows = [line.strip() for line in lines[1:6] if line.startswith("  rank")]
        labels = sorted(re.split(r"\s{2,}", row)[0] for row in rows)
        want_labels = sorted(["rank 0", "rank 1", "rank 1 worker pid %d" % worker_pid])
        if labels != want_labels:
            problems.append("summary labels %r, expected %r" % (labels, want_labels))
        if not any(row.startswith("rank 1 worker pid %d " % worker_pid) and worker_frame in row for row in rows):
            problems.append("no summary row for the worker at %s: %r" % (worker_frame, rows))
        if "(2 processes)" in run.stdout or "(3 processes)" in run.stdout:
            problems.append("a process count says a rank ran twice: %s" % run.stdout[:2000])
    report.result("--children: 2 ranks and rank 1's worker with its pid (text)", problems)

    run = run_pyframes(args.pyframes, ["--json", "--children", launcher.pid])
    problems = [run.describe()] if run.returncode != 0 or run.stderr else []
    if not problems:
        document = json.loads(run.stdout)
        by_pid = {p["pid"]: p for p in document.get("processes", [])}
        want = {ranks[0]["pid"]: None, rank1: None, worker_pid: rank1}
        if sorted(by_pid) != sorted(want):
            problems.append("processes %s, expected %s" % (sorted(by_pid), sorted(want)))
        for pid, owner in want.items():
            process = by_pid.get(pid, {})
            if process.get("worker_of") != owner:
                problems.append("pid %d: worker_of %r, expected %r" % (pid, process.get("worker_of"), owner))
        threads = [t for t in by_pid.get(worker_pid, {}).get("threads", [])
                   if t.get("native_id") == worker["threads"][0]["native_id"]]
        problems += compare_frames(python_frames(threads[0]) if threads else [], worker["threads"][0]["frames"])
        if by_pid.get(worker_pid, {}).get("ppid") != rank1:
            problems.append("worker ppid %r, expected %d" % (by_pid.get(worker_pid, {}).get("ppid"), rank1))
        members = (document.get("merged") or {}).get("members", [])
        got = sorted((m["pid"], m.get("worker_of")) for m in members)
        if got != sorted(want.items(), key=lambda item: item[0]):
            problems.append("merged members (pid, worker_of) %s, expected %s" % (got, sorted(want.items())))
        labels = [b.get("label") for b in (document.get("merged") or {}).get("tree", [])]
        if not any(label == "rank 1 worker pid %d" % worker_pid for label in all_labels(document)):
            problems.append("no merged branch labelled 'rank 1 worker pid %d': %s" % (worker_pid, labels))
    report.result("--json --children: worker_of and ppid of the worker, merged labels", problems)

    run = run_pyframes(args.pyframes, [worker_pid])
    want = "Process %d (worker of rank 1 pid %d, local rank 1)" % (worker_pid, rank1)
    problems = [run.describe()] if run.returncode != 0 or run.stderr else []
    if not problems and not run.stdout.startswith(want):
        problems.append("heading %r, expected %r" % (run.stdout.split("\n")[0], want))
    report.result("pyframes WORKER_PID: the heading names the rank it works for", problems)


def all_labels(document):
    """Every branch label of the merged tree in a --json document."""
    out = []
    stack = list((document.get("merged") or {}).get("tree", []))
    while stack:
        branch = stack.pop()
        out.append(branch.get("label"))
        stack.extend(branch.get("children", []))
    return out


def group_locals(report, args, targets, workdir):
    target = targets.start("case_locals.py")
    target.wait_ready()
    record = target.truth["threads"][0]
    run = run_pyframes(args.pyframes, ["--locals", "--globals", "--json", target.pid])
    problems = [run.describe()] if run.returncode != 0 else []
    namespaces = []
    if not problems:
        process = json.loads(run.stdout)["processes"][0]
        threads = [t for t in process["threads"] if t["thread_id"] == record["thread_id"]]
        frames = python_frames(threads[0]) if threads else []
        problems += compare_frames(frames, record["frames"])
        inspected = [f for f in frames if f["function"] == "inspect_me"]
        if not inspected:
            problems.append("no inspect_me frame")
        else:
            problems += check_locals(inspected[0].get("locals", []), record["locals"], record["names"])
            namespaces += check_namespace("global", inspected[0].get("globals", []), record["globals"])
            namespaces += check_namespace("builtin", inspected[0].get("builtins", []), record["builtins"])
    report.result("--locals --json against f_locals (%d variables)" % len(record["locals"]), problems)
    report.result("--globals --json against f_globals and builtins (%d and %d names)" %
                  (len(record["globals"]), len(record["builtins"])), namespaces)

    run = run_pyframes(args.pyframes, ["--locals", "--globals", target.pid])
    problems = [run.describe()] if run.returncode != 0 else []
    for name in ("STEP", "RUN_NAME"):
        line = "        (global) %s = %s" % (name, record["globals"][name]["repr"])
        if line not in run.stdout.split("\n"):
            problems.append("text lacks %r" % line)
    for name in ("small_int", "ascii_text", "short_list", "small_dict", "nothing"):
        truth = record["locals"][name]
        line = "        %s = %s" % (name, truth["repr"])
        if line not in run.stdout.split("\n"):
            problems.append("text lacks %r" % line)
    line = "        (arg) number = %s" % record["locals"]["number"]["repr"]
    if line not in run.stdout.split("\n"):
        problems.append("text lacks %r" % line)
    longest = max(len(line) for line in run.stdout.split("\n"))
    if longest > 400:
        problems.append("a text line of %d bytes: huge values must stay bounded" % longest)
    report.result("--locals --globals text", problems, "%d bytes, longest line %d" % (len(run.stdout), longest))


def group_states(report, args, targets, workdir):
    for program in ("case_states_gil.py", "case_states_idle.py"):
        target = targets.start(program)
        target.wait_ready()
        problems, detail = sample_states(args.pyframes, target)
        report.result("%s: thread states" % program[:-3], problems, detail)
        target.kill()  # its spinning threads would slow the next one down


def main():
    groups = {"job": group_job, "workers": group_workers, "locals": group_locals, "states": group_states}
    return run_group(__doc__.split("\n")[0], list(groups), "pyframes-job-itest-",
                     lambda report, args, targets, workdir: groups[args.group](report, args, targets, workdir))


if __name__ == "__main__":
    sys.exit(main())
