#!/usr/bin/env python3
"""Tests of `pyframes --native` against a real interpreter.

    run_native_tests.py --pyframes BUILD/pyframes/pyframes --python PYTHON \\
                        --extension-dir DIR_WITH_nativeblock --mode live|core

Targets (programs/): native_sleep.py (two threads blocked in time.sleep two Python calls
deep, one thread spinning in Python) and native_cext.py (Python -> C -> Python -> C through the
nativeblock extension, blocked in pthread_cond_wait, plus a thread that never runs Python and
one blocked in a C signal handler).
  live  pyframes --native on the running targets: merged stacks checked against the programs'
        own records, the kernel's pc of each blocked system call, gdb's unwind of the same
        threads and the interpreter's symbols; the text output; --native-all; two targets in
        one call; no right to trace; the targets run on afterwards, also when pyframes is
        killed in the middle of a read
  core  the same targets dumped with gcore (or by the kernel, where gcore wrote their stacks as
        zeros): the same checks on the cores, and the very same
        native frames as a live read of the blocked threads just before the dump; a gzip copy;
        an extension moved away after the dump (without --lib-search: a warning and no wrong
        merge; with it: the same frames)
Exit 0 passed, 1 failed, 77 skipped. Every process started is killed at the end.
"""
import argparse
import gzip
import json
import os
import platform
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
RECORDER = os.path.join(TOP, "tests", "pyframes", "live", "programs")  # stackrecord.py
sys.path[:0] = [HERE, os.path.join(TOP, "tests", "pyframes", "live"), os.path.join(TOP, "tests", "pyframes", "core")]

import native_checks as nc  # noqa: E402
from core_targets import (Skip, TargetError, Targets, gcore_with_output, kernel_core_of,  # noqa: E402
                          threads_in_ranges, zeroed_ranges)
from itest_checks import compare_frames, run_pyframes  # noqa: E402
from itest_targets import cpu_ticks, untouched_problems  # noqa: E402
from pyframes_itest import Report  # noqa: E402

SKIP = 77


def read_json(args, target, extra=()):
    """One `pyframes --native --json` read; (threads by native id, problems)."""
    run = run_pyframes(args.pyframes, ["--json", "--native"] + list(extra) + [target])
    if run.returncode != 0:
        return None, [run.describe()]
    processes = json.loads(run.stdout)["processes"]
    return {t["native_id"]: t for t in processes[0]["threads"]}, []


class Started(object):
    """A target program, its ground truth and where the kernel says its threads are blocked."""

    def __init__(self, args, targets, workdir, program, extension_dir=None):
        path = os.path.join(workdir, os.path.splitext(program)[0])
        os.mkdir(path)
        self.workdir = path
        env = {"PYTHONPATH": os.pathsep.join([extension_dir or args.extension_dir, RECORDER])}
        # dump_on_crash: a core the kernel writes can stand in for gcore's (see core_of).
        self.target = targets.start([args.python, os.path.join(HERE, "programs", program)], path, env=env,
                                    dump_on_crash=True)
        self.truth = self.target.wait_asleep()
        self.pid = self.target.pid
        self.records = {r["label"]: r for r in self.truth["threads"]}
        self.syscalls = {r["native_id"]: nc.syscall_of(self.pid, r["native_id"]) for r in self.truth["threads"]}

    def record_problems(self, label, thread, libc_names):
        record = self.records[label]
        if thread is None:
            return ["thread %s (%d) missing" % (label, record["native_id"])]
        problems = []
        if thread.get("native_note"):
            problems.append("not merged: %s" % thread["native_note"])
        problems += nc.innermost_problems(thread, self.syscalls.get(record["native_id"]), libc_names)
        problems += compare_frames(nc.python_only(thread["frames"]), record["frames"])
        problems += nc.merge_structure_problems(thread)
        return ["%s: %s" % (label, p) for p in problems] + (nc.dump(thread["frames"]) if problems else [])


def sleep_names(started, label):
    syscall = started.syscalls[started.records[label]["native_id"]]
    if syscall is None or syscall[0] not in nc.SLEEP_CALLS:
        raise TargetError("thread %s is not blocked in a sleeping system call: %s" % (label, syscall))
    return nc.SLEEP_CALLS[syscall[0]]


def interpreter_sleep_problems(thread, expected_names):
    """Between the libc frame and the first Python frame, the interpreter's time.sleep
    (time_sleep in Modules/timemodule.c); unnamed when the interpreter has no symbol for it."""
    frames = thread["frames"]
    first_python = next((i for i, f in enumerate(frames) if not nc.native(f)), len(frames))
    between = frames[1:first_python]
    if "time_sleep" in expected_names:
        if not any(f.get("function", "").split(".")[0] == "time_sleep" for f in between):
            return ["no time_sleep frame between libc and the first Python frame"] + nc.dump(frames[:first_python + 1])
    return []


def check_sleep_target(report, name, started, threads, gdb):
    # The interpreter: the executable, and libpython where the executable is a small launcher.
    modules = {started.truth["executable"]} | {
        f["module"] for t in threads.values() for f in t["frames"]
        if nc.native(f) and os.path.basename(f.get("module", "")).startswith("libpython")}
    interpreter_names = set()
    for module in modules:
        interpreter_names |= nc.module_functions(module)
    for label in ("main", "worker"):
        thread = threads.get(started.records[label]["native_id"])
        problems = started.record_problems(label, thread, sleep_names(started, label))
        if thread is not None and not problems:
            problems += interpreter_sleep_problems(thread, interpreter_names)
            if gdb is not None:
                problems += nc.gdb_problems(thread, gdb.get(thread["native_id"]))
        report.result("%s: %s thread (time.sleep)" % (name, label), problems,
                      "%d frames, %d native" % (len(thread["frames"]), len([f for f in thread["frames"] if nc.native(f)]))
                      if thread else "")
    ticker = threads.get(started.truth["ticker"])
    problems = ["ticker thread missing"] if ticker is None else (
        [] if ticker.get("native_note") else nc.merge_structure_problems(ticker))
    report.result("%s: spinning thread merged or noted, never merged wrongly" % name, problems,
                  ticker.get("native_note") or "merged" if ticker else "")


def check_cext_target(report, name, started, threads, gdb, native_all):
    thread = threads.get(started.records["main"]["native_id"])
    problems = started.record_problems("main", thread, ["pthread_cond_wait", "futex"])
    if thread is not None and not problems:
        order = []
        for i, frame in enumerate(thread["frames"]):
            key = frame.get("function") if nc.native(frame) else "py:" + frame["function"]
            if key in ("nativeblock_wait", "py:callback", "nativeblock_call", "py:run"):
                order.append(key)
        if order != ["nativeblock_wait", "py:callback", "nativeblock_call", "py:run"]:
            problems.append("expected Python run -> C nativeblock_call -> Python callback -> C nativeblock_wait, "
                            "innermost first the other way round; got %s" % order)
            problems += nc.dump(thread["frames"])
        if gdb is not None:
            problems += nc.gdb_problems(thread, gdb.get(thread["native_id"]))
    report.result("%s: Python -> C -> Python -> C" % name, problems)

    thread = threads.get(started.records["signalled"]["native_id"])
    problems = started.record_problems("signalled", thread, ["pthread_cond_wait", "futex"])
    if thread is not None and not problems:
        frames = thread["frames"]
        functions = [f.get("function", "") if nc.native(f) else "py:" + f["function"] for f in frames]
        wanted = ["nativeblock_signal_handler", "nativeblock_block_in_signal_handler", "py:in_handler"]
        if [f for f in functions if f in wanted] != wanted:
            problems.append("expected %s in this order (innermost first) across the signal frame" % wanted)
        else:
            # Right outside the handler: libc's signal trampoline, by name where libc's symbols
            # (or its debug file's) have it.
            trampoline = frames[functions.index("nativeblock_signal_handler") + 1]
            libc = trampoline.get("module", "")
            expected = "__restore_rt" if "__restore_rt" in nc.module_functions(libc) else ""
            if not os.path.basename(libc).startswith("libc.so") or trampoline.get("function") != expected:
                problems.append("the handler's caller is %s, not libc's signal trampoline %s" % (
                    nc.describe(trampoline), expected or "(unnamed)"))
        if problems:
            problems += nc.dump(frames)
        if gdb is not None:
            problems += nc.gdb_problems(thread, gdb.get(thread["native_id"]))
    report.result("%s: a thread blocked in a signal handler, through the signal frame" % name, problems)

    tid = started.truth["native_thread"]
    plain = threads.get(tid)
    if not native_all:
        report.result("%s: a thread without Python state only with --native-all" % name,
                      [] if plain is None else ["thread %d shown without --native-all" % tid])
        return
    problems = []
    if plain is None:
        problems.append("thread %d (no Python state) missing with --native-all" % tid)
    else:
        functions = [f.get("function", "") for f in plain["frames"]]
        if plain.get("thread_id") != 0 or any(not nc.native(f) for f in plain["frames"]):
            problems.append("not a native-only thread: %s" % plain)
        if "nativeblock_thread_main" not in functions or not any("pthread_cond_wait" in f for f in functions):
            problems.append("frames lack nativeblock_thread_main or pthread_cond_wait: %s" % functions)
        syscall = started.syscalls.get(tid) or nc.syscall_of(started.pid, tid)
        if syscall is not None and plain["frames"] and plain["frames"][0].get("address") != syscall[1]:
            problems.append("innermost pc %#x, the kernel says %#x" % (plain["frames"][0]["address"], syscall[1]))
        if gdb is not None:
            problems += nc.gdb_problems(plain, gdb.get(tid))
    report.result("%s: --native-all shows the thread without Python state" % name, problems)


def ticker_problems(started, timeout=120.0):
    """The target still runs: its spinning thread's CPU time goes on growing. Polled until it
    does (a loaded machine may not run it for a while); only a stopped thread reaches the deadline."""
    tid = started.truth["ticker"]
    before = cpu_ticks(started.pid, tid)
    deadline = time.monotonic() + timeout
    while cpu_ticks(started.pid, tid) <= before and time.monotonic() < deadline:
        time.sleep(0.05)
    problems = untouched_problems(started.pid)
    if cpu_ticks(started.pid, tid) <= before:
        problems.append("the spinning thread made no progress")
    return problems


def killed_reads_problems(args, started, runs=12):
    """pyframes killed at random moments of --native reads (while the target is stopped, too)
    must leave the target running: the kernel detaches a dead tracer's tracees."""
    rng = random.Random(started.pid)
    for i in range(runs):
        child = subprocess.Popen([args.pyframes, "--native", str(started.pid)], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0, 0.03))
        child.send_signal([signal.SIGINT, signal.SIGTERM, signal.SIGKILL][i % 3])
        child.wait()
    return ticker_problems(started)


def mode_live(args, targets, workdir, report):
    sleeper = Started(args, targets, workdir, "native_sleep.py")
    threads, problems = read_json(args, str(sleeper.pid))
    if problems:
        return report.result("pyframes --native on %d" % sleeper.pid, problems)
    gdb = nc.gdb_stacks(sleeper.pid, workdir)
    if gdb is None:
        print("note: gdb is not installed: no cross-check with gdb's unwind")
    check_sleep_target(report, "live", sleeper, threads, gdb)
    run = run_pyframes(args.pyframes, ["--native", sleeper.pid])
    problems = [run.describe()] if run.returncode != 0 or run.stderr else []
    if not problems:
        for label in ("main", "worker"):
            problems += nc.text_problems(run.stdout, threads[sleeper.records[label]["native_id"]])
    report.result("live: text output marks native frames", problems)
    report.result("live: the target runs on after --native", ticker_problems(sleeper))
    report.result("live: the target runs on after pyframes was killed mid-read", killed_reads_problems(args, sleeper))

    cext = Started(args, targets, workdir, "native_cext.py")
    gdb = nc.gdb_stacks(cext.pid, workdir) if gdb is not None else None
    for extra in ((), ("--native-all",)):
        threads, problems = read_json(args, str(cext.pid), extra)
        if problems:
            report.result("pyframes --native %s on %d" % (" ".join(extra), cext.pid), problems)
            continue
        check_cext_target(report, "live" + (" --native-all" if extra else ""), cext, threads, gdb, bool(extra))
    report.result("live: the C-extension target runs on", untouched_problems(cext.pid))
    merged_view_checks(args, report, sleeper, cext)

    # Several targets in one call: each is stopped and unwound by the worker thread reading it.
    problems = []
    run = run_pyframes(args.pyframes, ["--json", "--native", sleeper.pid, cext.pid])
    if run.returncode != 0:
        problems.append(run.describe())
    else:
        processes = {p["pid"]: p for p in json.loads(run.stdout)["processes"]}
        for started in (sleeper, cext):
            threads = {t["native_id"]: t for t in processes.get(started.pid, {}).get("threads", [])}
            main_thread = threads.get(started.records["main"]["native_id"])
            if main_thread is None or main_thread.get("native_note") or not nc.native(main_thread["frames"][0]):
                problems.append("process %d: main thread not merged: %s" % (started.pid, main_thread))
    report.result("live: two processes in one --native call", problems)

    # Without the right to trace: one error line, and the target untouched.
    run = run_pyframes(args.pyframes, ["--native", cext.pid], as_user="nobody")
    lines = run.stderr_lines()
    problems = [] if run.returncode == 1 and len(lines) == 1 and lines[0].startswith("pyframes: ") and \
        "Permission denied" in lines[0] else ["expected one permission error, got %s" % run.describe()]
    report.result("live: --native without the right to trace", problems + untouched_problems(cext.pid),
                  lines[0] if lines else "")


def summary_rows(text):
    """The rows of the merged view's summary: after "N distinct stacks:", up to the blank line."""
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if " distinct stack" in line), None)
    if start is None:
        return []
    rows = []
    for line in lines[start + 1:]:
        if not line.strip():
            break
        rows.append(line)
    return rows


PLUMBING_WORDS = ("__futex", "pthread_cond_wait", "clock_nanosleep", "lto_priv", "_Py", "PyObject_", "cfunction_")


def merged_view_checks(args, report, sleeper, cext):
    """--native in the merged view: the summary names the innermost Python frame and the
    program's own innermost native frame (the extension's block_forever), never libc's or the
    interpreter's; a plain Python wait (time.sleep) ends at its Python frame. --native-all brings
    the thread that never runs Python into the merged view, --native does not."""
    run = run_pyframes(args.pyframes, ["--native", "--merge", cext.pid])
    rows = summary_rows(run.stdout)
    problems = [run.describe()] if run.returncode != 0 else []
    if len(rows) != 1:
        problems.append("expected one summary row, got %s: %s" % (rows, run.stdout[:1500]))
    else:
        row = rows[0]
        if "callback (" not in row or "→ [native] block_forever (nativeblock" not in row:
            problems.append("the row does not end in callback -> [native] block_forever: %r" % row)
        problems += ["plumbing %r in the row %r" % (w, row) for w in PLUMBING_WORDS if w in row]
    report.result("live --native --merge: the summary names the extension's frame, not libc's", problems,
                  rows[0].strip() if rows else "")

    run = run_pyframes(args.pyframes, ["--native", "--merge", sleeper.pid])
    rows = summary_rows(run.stdout)
    problems = [run.describe()] if run.returncode != 0 else []
    frame = sleeper.records["main"]["frames"][0]
    want = "%s (%s:%d)" % (frame["function"], frame["file"], frame["line"])
    if len(rows) != 1 or "[native]" in rows[0] or not rows[0].split("  [")[0].rstrip().endswith(want):
        problems.append("expected one row ending at %s with no native frame (a plain Python wait): %s" % (want, rows))
    report.result("live --native --merge: a plain time.sleep ends at its Python frame", problems,
                  rows[0].strip() if rows else "")

    tid = cext.truth["native_thread"]
    problems = []
    for extra, wanted in ((["--native"], False), (["--native-all"], True),
                          (["--native-all", "--all-threads"], True)):
        run = run_pyframes(args.pyframes, ["--json", "--merge"] + extra + [cext.pid, sleeper.pid])
        if run.returncode != 0:
            problems.append(run.describe())
            continue
        merged = json.loads(run.stdout)["merged"]
        tids = [m["native_id"] for m in merged["members"]]
        if (tid in tids) != wanted:
            problems.append("%s: the thread without Python (%d) %s the merged members %s" % (
                " ".join(extra), tid, "missing from" if wanted else "in", tids))
        for started in (cext, sleeper):
            if started.pid not in tids:
                problems.append("%s: main thread of %d missing" % (" ".join(extra), started.pid))
    run = run_pyframes(args.pyframes, ["--native-all", "--merge", cext.pid, sleeper.pid])
    if "thread without Python (--native-all)" not in run.stdout.split("\n")[0] or \
            "[native] block_forever" not in "\n".join(summary_rows(run.stdout)):
        problems.append("--native-all text: header or summary lacks the native thread: %s" % run.stdout[:1500])
    report.result("live --native-all --merge: the thread without Python joins the merged view", problems)


def native_addresses(thread):
    return [f["address"] for f in thread["frames"] if nc.native(f)]


def core_of(started, workdir):
    """(core path, name for the report): gcore's core of the target, or the kernel's (SIGABRT)
    when gcore wrote blocked threads' stacks as zeros (gdb 13 cannot read the guard pages glibc
    2.43 puts inside thread stacks; its own warnings say where: see core/*/threads)."""
    core, output = gcore_with_output(started.pid, os.path.join(workdir, "core"))
    cut = threads_in_ranges(started.pid, [r["native_id"] for r in started.truth["threads"]],
                            zeroed_ranges(started.pid, output))
    if not cut:
        return core, "core " + os.path.basename(core)
    os.unlink(core)
    core = kernel_core_of(started.target, started.workdir)
    return core, "kernel core (gcore wrote the stacks of threads %s as zeros)" % ", ".join(map(str, cut))


def read_core(args, core, extra=()):
    run = run_pyframes(args.pyframes, ["--json", "--native-all"] + list(extra) + [core])
    if run.returncode != 0:
        return None, None, [run.describe()]
    process = json.loads(run.stdout)["processes"][0]
    return {t["native_id"]: t for t in process["threads"]}, process.get("warnings", []), []


def mode_core(args, targets, workdir, report):
    for program in ("native_sleep.py", "native_cext.py"):
        # The extension is loaded from a copy that is moved away after the dump, as when a core
        # is read on another machine: its code is not in the core, only in the file.
        extension_copy = os.path.join(workdir, "extension") if program == "native_cext.py" else None
        if extension_copy:
            shutil.copytree(args.extension_dir, extension_copy)
        started = Started(args, targets, workdir, program, extension_copy)
        live, problems = read_json(args, str(started.pid), ("--native-all",))
        if problems:
            report.result("live read before the dump", problems)
            continue
        core, name = core_of(started, workdir)
        extra = ()
        if extension_copy:
            moved = os.path.join(workdir, "moved")
            os.rename(extension_copy, moved)
            extra = ("--lib-search", moved)
            dumped, warnings, problems = read_core(args, core)
            if not problems:
                thread = dumped.get(started.records["main"]["native_id"])
                if not any(os.path.basename(extension_copy) in w for w in warnings):
                    problems.append("no warning names the missing extension: %s" % warnings)
                if thread is None:
                    problems.append("main thread missing")
                elif not thread.get("native_note"):
                    problems += started.record_problems("main", thread, ["pthread_cond_wait", "futex"])
            report.result("%s without the moved extension: a warning, and no wrong merge" % name, problems,
                          thread.get("native_note", "merged") if not problems else "")
        dumped, _, problems = read_core(args, core, extra)
        if problems:
            report.result("pyframes --native %s %s" % (" ".join(extra), core), problems)
            continue
        name += " " + " ".join(extra) if extra else ""
        if program == "native_sleep.py":
            check_sleep_target(report, name, started, dumped, None)
            blocked = [started.records[label]["native_id"] for label in ("main", "worker")]
        else:
            check_cext_target(report, name, started, dumped, None, True)
            blocked = [started.records["main"]["native_id"], started.records["signalled"]["native_id"],
                       started.truth["native_thread"]]
        problems = []
        for tid in blocked:
            if tid in dumped and tid in live and native_addresses(dumped[tid]) != native_addresses(live[tid]):
                problems.append("thread %d: core %s, live %s" % (tid, [hex(a) for a in native_addresses(dumped[tid])],
                                                                 [hex(a) for a in native_addresses(live[tid])]))
        report.result("%s: the same native frames as the live process" % name, problems)
        started.target.kill()
        if not core.startswith(workdir):
            os.unlink(core)
            continue
        if program == "native_sleep.py":
            # A gzip-compressed copy: the same native frames, unwound through the inflated core.
            with open(core, "rb") as raw, gzip.open(core + ".gz", "wb", compresslevel=1) as packed:
                shutil.copyfileobj(raw, packed)
            packed_threads, _, problems = read_core(args, core + ".gz")
            for tid in blocked if not problems else []:
                if native_addresses(packed_threads.get(tid, {"frames": []})) != native_addresses(dumped[tid]):
                    problems.append("thread %d differs between the core and its gzip copy" % tid)
            report.result("%s.gz: the same native frames as the core" % name, problems)
            os.unlink(core + ".gz")
        os.unlink(core)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pyframes", required=True)
    parser.add_argument("--python", required=True)
    parser.add_argument("--extension-dir", required=True)
    parser.add_argument("--mode", required=True, choices=["live", "core"])
    args = parser.parse_args()
    version = subprocess.run([args.python, "-c", "import platform; print(platform.python_version())"],
                             stdout=subprocess.PIPE, universal_newlines=True).stdout.strip()
    print("interpreter: %s (CPython %s); driver: Python %s" % (args.python, version, platform.python_version()))
    report = Report()
    with tempfile.TemporaryDirectory(prefix="pyframes-native-") as workdir:
        os.chmod(workdir, 0o755)
        with Targets() as targets:
            try:
                (mode_live if args.mode == "live" else mode_core)(args, targets, workdir, report)
            except Skip as skip:
                print("SKIPPED: %s" % skip)
                return SKIP
            except TargetError as error:
                report.result("target setup", [str(error)])
    print("%s: native %s on CPython %s" % ("FAILED" if report.failures else "PASSED", args.mode, version))
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
