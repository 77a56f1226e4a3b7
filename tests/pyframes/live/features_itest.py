#!/usr/bin/env python3
"""Integration tests of what pyframes reads beyond frames and lines, live and from a gcore core.

    features_itest.py --pyframes BUILD/pyframes/pyframes --python /path/to/python3 --group values

Groups (one ctest each per interpreter):
  values  --locals of programs/case_values.py against the interpreter's own repr(): nested
          containers cut by size and not by depth, containers that hold themselves ([...]),
          Python's default repr of an instance (module.name), numpy scalars' values and arrays'
          shape and dtype, a torch.Tensor by its type (numpy and torch where importable)
  positions  the column ranges of 3.11+ (code.co_positions() of each frame's instruction) in
          --json (end_line, column, end_column) and as carets under the source line in text;
          none before 3.11 (programs/case_positions.py: `reduce(a) + reduce(b)`)
  gc      the garbage collector's state ("gc_collecting" in --json, "garbage collection running"
          in the text header) against a gc.callbacks hook in the target: blocked in a __del__
          that gc.collect() runs, and blocked outside any collection; null (cannot tell) on 3.6
  subinterp  a sub-interpreter run on the main thread (programs/case_subinterp.py): two thread
          states on one OS thread, each with its own stack and its interpreter's id ("interpreter"
          in --json, "interpreter N" in the text header), the main interpreter's first, the
          second linked to it in text ("on the same OS thread as interpreter 0's thread state")
  startup the interpreter stopped by gdb at `main` (no interpreter yet) and at the creation of its
          first thread state (an interpreter without threads), dumped with gcore: both cores
          get the same answer, one error line "not initialised yet" and exit status 1; a
          --lib-search entry that is not a directory is skipped with a warning (exit 0)
Each check runs on the live process (--json and text) and on a gcore core of it (--json).
Ground truth comes from the programs themselves; every process started is killed at the end.
"""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "core"))

from itest_checks import compare_frames, python_frames, run_pyframes  # noqa: E402
from job_checks import check_locals  # noqa: E402
from pyframes_itest import run_group  # noqa: E402


def dump_core(target, workdir):
    """A gcore core of the target, or None (with the reason) when gdb cannot write one here."""
    from core_targets import Skip, gcore
    try:
        return gcore(target.pid, os.path.join(workdir, "core-%s" % target.name)), ""
    except Skip as reason:
        return None, str(reason)


def main_thread(run, record):
    process = json.loads(run.stdout)["processes"][0]
    threads = [t for t in process["threads"] if t["thread_id"] == record["thread_id"]]
    return threads[0] if threads else None


def sources(args, target, workdir, extra):
    """(label, pyframes --json run) for the live process and for a core of it."""
    yield "live", run_pyframes(args.pyframes, extra + ["--json", target.pid])
    core, why = dump_core(target, workdir)
    if core is None:
        print("core: not checked (%s)" % why)
        return
    not_a_directory = os.path.join(workdir, "not-a-directory")
    with open(not_a_directory, "w") as f:
        f.write("a file\n")
    run = run_pyframes(args.pyframes, extra + ["--json", "--lib-search", not_a_directory, core], timeout=60.0)
    warning = "--lib-search %s: not a directory, skipped" % not_a_directory
    if warning not in run.stdout + run.stderr:  # --json: the process's "warnings"
        run.returncode = "no warning %r (%s)" % (warning, run.returncode)
    yield "core", run


def saved_and_merged(args, run, workdir, name):
    """The processes of `run`'s --json document after a round trip through a file and
    `pyframes --merge-json --no-merge --json` (what a document saved on another node goes through)."""
    path = os.path.join(workdir, name + ".json")
    with open(path, "w") as f:
        f.write(run.stdout)
    merged = run_pyframes(args.pyframes, ["--merge-json", "--no-merge", "--json", path])
    if merged.returncode != 0:
        raise AssertionError(merged.describe())
    return json.loads(merged.stdout)["processes"]


def group_values(report, args, targets, workdir):
    target = targets.start("case_values.py")
    target.wait_ready()
    record = target.truth["threads"][0]
    values = record["values"]
    for label, run in sources(args, target, workdir, ["--locals"]):
        problems = [run.describe()] if run.returncode != 0 else []
        checked = 0
        if not problems:
            thread = main_thread(run, record)
            frames = python_frames(thread) if thread else []
            problems += compare_frames(frames, record["frames"])
            for function, truth in sorted(values.items()):
                found = [f for f in frames if f["function"] == function]
                if not found:
                    problems.append("no %s frame" % function)
                    continue
                problems += ["%s: %s" % (function, p)
                             for p in check_locals(found[0].get("locals", []), truth["locals"], truth["names"])]
                checked += len(truth["locals"])
        report.result("%s --locals --json against repr() (%d values in %s)" % (label, checked, ", ".join(sorted(values))),
                      problems)
    run = run_pyframes(args.pyframes, ["--locals", target.pid])
    problems = [run.describe()] if run.returncode != 0 else []
    lines = run.stdout.split("\n")
    for function, truth in sorted(values.items()):
        for name, want in sorted(truth["locals"].items()):
            if want["expect"] == "exact" and "        %s = %s" % (name, want["repr"]) not in lines:
                problems.append("text lacks %r" % ("%s = %s" % (name, want["repr"])))
    report.result("live --locals text", problems)


def expected_carets(path, line, column, end_column):
    """The caret line under source line `line` for UTF-8 byte columns [column, end_column), or None
    when the range covers the whole stripped line (then pyframes prints none)."""
    with open(path, "rb") as f:
        raw = f.read().split(b"\n")[line - 1]
    stripped = raw.strip(b" \t\r\f\v")
    lead = len(raw) - len(raw.lstrip(b" \t\r\f\v"))
    if column == lead and end_column == lead + len(stripped):
        return None
    return "        " + " " * len(raw[lead:column].decode("utf-8")) + "^" * len(raw[column:end_column].decode("utf-8"))


def group_positions(report, args, targets, workdir):
    target = targets.start("case_positions.py")
    target.wait_ready()
    record = target.truth["threads"][0]
    truth = record["positions"]
    has_columns = any("position" in entry for entry in truth)
    runs = list(sources(args, target, workdir, []))
    for label, run in runs:
        problems = [run.describe()] if run.returncode != 0 else []
        if not problems:
            thread = main_thread(run, record)
            frames = python_frames(thread) if thread else []
            problems += compare_frames(frames, record["frames"])
            callers = frames[1:1 + len(truth)]
            for frame, want in zip(callers, truth):
                where = "%s (line %d)" % (want["function"], want["line"])
                if "position" not in want:
                    if any(key in frame for key in ("column", "end_column", "end_line")):
                        problems.append("%s: a column range where CPython %s has none" % (where, target.truth["python"]))
                    continue
                line, end_line, column, end_column = want["position"]
                got = (frame.get("line"), frame.get("end_line"), frame.get("column"), frame.get("end_column"))
                if got != (line, end_line, column, end_column):
                    problems.append("%s: (line, end_line, column, end_column) %s, co_positions() says %s" % (
                        where, got, (line, end_line, column, end_column)))
        if not problems and label == "live":
            frames = python_frames(main_thread(run, record))
            kept = python_frames([t for t in saved_and_merged(args, run, workdir, "positions")[0]["threads"]
                                  if t["thread_id"] == record["thread_id"]][0])
            fields = ("line", "end_line", "column", "end_column")
            if [[f.get(k) for k in fields] for f in kept] != [[f.get(k) for k in fields] for f in frames]:
                problems.append("--merge-json of the saved document changed the column ranges")
        report.result("%s --json: column ranges of %d frames against co_positions()%s" % (
            label, len(truth), "" if has_columns else " (none before 3.11)"), problems)
    run = run_pyframes(args.pyframes, [target.pid])
    problems = [run.describe()] if run.returncode != 0 else []
    lines = run.stdout.split("\n")
    path = record["frames"][0]["file"]
    carets_seen = 0
    for want in truth:
        header = [i for i, text in enumerate(lines) if text == "    %s (%s:%d)" % (want["function"], path, want["line"])]
        if len(header) != 1:
            problems.append("text: %d lines for %s:%d" % (len(header), want["function"], want["line"]))
            continue
        below = lines[header[0] + 2] if header[0] + 2 < len(lines) else ""
        expected = None
        if "position" in want and want["position"][1] == want["line"]:
            expected = expected_carets(path, want["line"], want["position"][2], want["position"][3])
        if expected is None and below.strip().startswith("^"):
            problems.append("text: %s: carets %r where none say anything" % (want["function"], below))
        elif expected is not None:
            carets_seen += 1
            if below != expected:
                problems.append("text: %s: carets %r, expected %r" % (want["function"], below, expected))
    report.result("live text: carets under the source lines (%d frames with carets)" % carets_seen, problems)

    # A second process blocked in the other call of the same line: merged, the two part at train's
    # frame from 3.11 (different columns), and share it before (no columns to tell them apart).
    other = targets.start("case_positions.py", ["first"])
    other.wait_ready()
    other_truth = other.truth["threads"][0]["positions"]
    run = run_pyframes(args.pyframes, ["--json", target.pid, other.pid])
    problems = [run.describe()] if run.returncode != 0 else []
    if not problems:
        trains = []
        stack = list(json.loads(run.stdout)["merged"]["tree"])
        while stack:
            branch = stack.pop()
            trains += [(f.get("column"), f.get("end_column")) for f in branch.get("frames", []) if f["function"] == "train"]
            stack.extend(branch.get("children", []))
        want = set()
        for positions in (truth, other_truth):
            entry = [e for e in positions if e["function"] == "train"][0]
            want.add(tuple(entry["position"][2:4]) if "position" in entry else (None, None))
        if sorted(trains, key=str) != sorted(want, key=str):
            problems.append("merged tree: train frames with columns %s, the processes say %s" % (trains, sorted(want, key=str)))
    report.result("merged: two processes in different calls of one line part there from 3.11 (%d branches)" % len(want),
                  problems)
    run = run_pyframes(args.pyframes, [target.pid, other.pid])
    problems = [run.describe()] if run.returncode != 0 else []
    rows = [line for line in run.stdout.split("\n") if line.startswith("  pid ")]
    for column, end_column in sorted(want, key=str):
        if column is None:
            continue
        marked = [row for row in rows if " train (" in row and ":%d, columns %d-%d)" % (
            [e for e in truth if e["function"] == "train"][0]["line"], column + 1, end_column) in row]
        if len(marked) != 1:
            problems.append("no single summary row names columns %d-%d: %r" % (column + 1, end_column, rows))
    report.result("merged text: summary rows that would read the same name their columns", problems)


def group_gc(report, args, targets, workdir):
    for mode in ("collecting", "idle"):
        target = targets.start("case_gc.py", [mode])
        target.wait_ready()
        record = target.truth["threads"][0]
        version = tuple(int(x) for x in target.truth["python"].split(".")[:2])
        want = None if version < (3, 7) else record["collecting"]
        for label, run in sources(args, target, workdir, []):
            problems = [run.describe()] if run.returncode != 0 else []
            if not problems:
                process = json.loads(run.stdout)["processes"][0]
                if "gc_collecting" not in process:
                    problems.append("no gc_collecting in the document")
                elif process["gc_collecting"] is not want:
                    problems.append("gc_collecting %r; the target's gc.callbacks say %r%s" % (
                        process["gc_collecting"], record["collecting"], " (3.6: cannot tell)" if want is None else ""))
                thread = main_thread(run, record)
                problems += compare_frames(python_frames(thread) if thread else [], record["frames"])
            if not problems and label == "live":
                kept = saved_and_merged(args, run, workdir, "gc-" + mode)[0].get("gc_collecting", "absent")
                if kept is not want:
                    problems.append("--merge-json of the saved document: gc_collecting %r" % (kept,))
            report.result("%s %s: gc_collecting is %s%s" % (label, mode, want, " (and through --merge-json)"
                                                             if label == "live" else ""), problems)
        run = run_pyframes(args.pyframes, [target.pid])
        shown = "garbage collection running" in run.stdout.split("\n")[1] if run.returncode == 0 else None
        problems = [run.describe()] if run.returncode != 0 else []
        if run.returncode == 0 and shown != bool(want):
            problems.append("text header %r, the target's gc.callbacks say %r" % (run.stdout.split("\n")[1], want))
        report.result("live text %s: header says a collection runs only when one does" % mode, problems)
        target.kill()


def thread_states(run, native_id):
    """(problems, the thread states on OS thread `native_id`) of a `pyframes --json` run."""
    if run.returncode != 0:
        return [run.describe()], []
    process = json.loads(run.stdout)["processes"][0]
    return [], [t for t in process["threads"] if t["native_id"] == native_id]


def group_subinterp(report, args, targets, workdir):
    target = targets.start("case_subinterp.py")
    from self_recording import wait_asleep, wait_truth
    truth = wait_truth(target.process, target.truth_path, target.name, target.log, 60.0)
    wait_asleep(target.pid, [truth["native_id"]], target.name, 60.0)
    target.truth = truth
    ids = (truth["outer"]["interpreter"], truth["inner"]["interpreter"])
    for label, run in sources(args, target, workdir, []):
        problems, states = thread_states(run, truth["native_id"])
        if not problems:
            if len(states) != 2:
                problems.append("%d thread states on OS thread %d, expected 2" % (len(states), truth["native_id"]))
            else:
                for state, part in zip(states, ("outer", "inner")):
                    problems += ["%s: %s" % (part, p) for p in compare_frames(python_frames(state), truth[part]["frames"])]
                    want = truth[part]["interpreter"]
                    if want is not None and state.get("interpreter") != want:
                        problems.append("%s: interpreter %r, the interpreter says %r" % (part, state.get("interpreter"), want))
                if "interpreter" in states[0] and states[0]["interpreter"] == states[1].get("interpreter"):
                    problems.append("both thread states say interpreter %r" % states[0]["interpreter"])
        if not problems and label == "live":
            kept = [(t.get("interpreter"), len(t["frames"])) for t in saved_and_merged(args, run, workdir, "subinterp")[0]
                    ["threads"] if t["native_id"] == truth["native_id"]]
            if kept != [(t.get("interpreter"), len(t["frames"])) for t in states]:
                problems.append("--merge-json of the saved document: %s" % kept)
        report.result("%s --json: two thread states on one OS thread, interpreters %s" % (label, ids), problems)
    # --native: the OS thread's native stack is sliced between its thread states (as pystack does):
    # each keeps its Python frames, gets native frames, and none says its stack was not merged.
    for label, run in sources(args, target, workdir, ["--native"]):
        problems, states = thread_states(run, truth["native_id"])
        if not problems:
            if len(states) != 2:
                problems.append("%d thread states on OS thread %d, expected 2" % (len(states), truth["native_id"]))
            for state, part in zip(states, ("outer", "inner")):
                problems += ["%s: %s" % (part, p) for p in compare_frames(python_frames(state), truth[part]["frames"])]
                if state.get("native_note") or state.get("native_frames"):
                    problems.append("%s: %s" % (part, state.get("native_note")))
                if not [f for f in state["frames"] if f.get("kind") == "native"]:
                    problems.append("%s: no native frames" % part)
        report.result("%s --native: the OS thread's native stack sliced between its two thread states" % label, problems)

    run = run_pyframes(args.pyframes, [target.pid])
    problems = [run.describe()] if run.returncode != 0 else []
    headers = [line for line in run.stdout.split("\n") if line.startswith("Thread %d " % truth["native_id"])]
    if len(headers) != 2:
        problems.append("%d text blocks for thread %d, expected 2: %r" % (len(headers), truth["native_id"], headers))
    elif ids[1] is not None:
        link = "interpreter %d, on the same OS thread as interpreter %d's thread state above" % (ids[1], ids[0])
        if "interpreter %d" % ids[0] not in headers[0] or link not in headers[1]:
            problems.append("text headers %r do not name interpreters %d and %d and link them" % (headers, ids[0], ids[1]))
    elif "on the same OS thread as" not in headers[1]:
        problems.append("text headers %r: the second does not link to the first" % headers)
    report.result("live text: both blocks, the second linked to the first", problems, " | ".join(headers))


def defined_symbols(python):
    """The function symbols of the interpreter's executable and its libpython (nm), or set()."""
    out = subprocess.run(["ldd", python], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         universal_newlines=True).stdout
    files = [python] + [line.split("=>")[1].split()[0] for line in out.split("\n")
                        if "libpython" in line and "=>" in line]
    names = set()
    for path in files:
        for flags in ([], ["-D"]):
            listing = subprocess.run(["nm"] + flags + [path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     universal_newlines=True).stdout
            names.update(line.split()[-1] for line in listing.split("\n") if " T " in line or " t " in line)
    return names


def core_stopped_at(python, symbol, path):
    """Runs `python -c pass` under gdb up to `symbol`, writes a core there: (the core's path or
    None, whether the program ran to its end without stopping there)."""
    done = subprocess.run(["gdb", "-batch", "-nx", "-ex", "set breakpoint pending on", "-ex", "break %s" % symbol,
                    "-ex", "run", "-ex", "gcore %s" % path, "-ex", "kill", "--args", python, "-c", "pass"],
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    return (path if os.path.exists(path) else None), b"exited normally" in done.stdout


def group_startup(report, args, targets, workdir):
    if shutil.which("gdb") is None:
        report.result("gdb to stop the interpreter while it starts", ["gdb is not installed"])
        return
    symbols = defined_symbols(args.python)
    stops = [("before the interpreter exists", ["main"]),
             ("an interpreter without thread states", ["_PyThreadState_New", "PyThreadState_New"])]
    for what, candidates in stops:
        symbol = next((name for name in candidates if name in symbols), None)
        if symbol is None:
            print("%s: not checked (no symbol %s in %s)" % (what, " or ".join(candidates), args.python))
            continue
        core, never_stopped = core_stopped_at(args.python, symbol, os.path.join(workdir, "startup-%s.core" % symbol))
        if core is None and never_stopped:
            # A static, link-time-optimised interpreter calls its own inlined copy, not the symbol.
            print("%s: not checked (the program never called the exported %s)" % (what, symbol))
            continue
        problems = [] if core else ["gdb wrote no core at %s" % symbol]
        if core:
            for extra in ([], ["--json"]):
                run = run_pyframes(args.pyframes, extra + [core], timeout=60.0)
                stacks = (json.loads(run.stdout)["processes"] if extra else
                          [line for line in run.stdout.split("\n") if line.startswith("Thread ")])
                if run.returncode != 1 or "not initialised yet" not in run.stderr or stacks:
                    problems.append("%s: expected exit 1 and 'not initialised yet': %s" % (
                        " ".join(extra) or "text", run.describe()))
                elif len(run.stderr_lines()) != 1:
                    problems.append("%d stderr lines, expected one: %r" % (len(run.stderr_lines()), run.stderr))
        report.result("core at %s (%s): one error line, exit 1" % (symbol, what), problems)


def main():
    groups = {"values": group_values, "positions": group_positions, "gc": group_gc, "subinterp": group_subinterp, "startup": group_startup}
    return run_group(__doc__.split("\n")[0], list(groups), "pyframes-features-itest-",
                     lambda report, args, targets, workdir: groups[args.group](report, args, targets, workdir))


if __name__ == "__main__":
    sys.exit(main())
