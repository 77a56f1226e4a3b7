"""gdb extension tests: gdb -batch sessions on live processes and gcore'd cores (the kernel's
where gcore writes thread stacks as zeros) of a real
interpreter, compared with what the programs recorded about themselves.

    run_gdb_tests.py --group live|core|remote --python PY --loader build/gdb/pyframes-gdb.py

remote: the live process through gdbserver (`target remote | gdbserver - --attach PID`), which
the extension reads through a core gdb writes of it.

Programs: tests/pyframes/live/programs/case_threads.py (named threads), case_methods.py
(qualified names) and tests/gdb/programs/case_gdb_locals.py (locals, navigation, a thread with
no Python state). Every target is killed, every core deleted."""
import argparse
import os
import resource
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "pyframes", "live"))
sys.path.insert(0, os.path.join(HERE, "..", "pyframes", "core"))

from core_targets import Skip  # noqa: E402
from itest_targets import Targets, TargetError  # noqa: E402

import gdb_session as gs  # noqa: E402
import stack_checks as sc  # noqa: E402

INTEGRATION_PROGRAMS = os.path.normpath(os.path.join(HERE, "..", "pyframes", "live", "programs"))
GDB_PROGRAMS = os.path.join(HERE, "programs")
PROGRAMS = [os.path.join(INTEGRATION_PROGRAMS, "case_threads.py"), os.path.join(INTEGRATION_PROGRAMS, "case_methods.py"),
            os.path.join(GDB_PROGRAMS, "case_gdb_locals.py")]


def main_record(truth):
    return [r for r in truth["threads"] if r["label"] == "main"][0]


def stack_commands(truth):
    main = main_record(truth)
    return [["select-lwp", main["native_id"]], "pyframes bt", "py-bt", "pyframes bt --native", "pyframes bt --all",
            "thread apply all pyframes bt", "thread apply all pyframes bt --native"]


def check_stacks(results, truth, what):
    main = main_record(truth)
    out = dict((str(r["command"]), r) for r in results)
    problems = []
    for command in ("pyframes bt", "py-bt", "pyframes bt --native", "pyframes bt --all", "thread apply all pyframes bt",
                    "thread apply all pyframes bt --native"):
        if out[command]["error"]:
            problems.append("%s: `%s` failed: %s" % (what, command, out[command]["error"]))
    if problems:
        return problems
    problems += sc.check_bt(out["pyframes bt"]["output"], main, "%s: pyframes bt" % what)
    if what.endswith("remote") and "note: read from a core gdb wrote of the remote process" not in out["pyframes bt"]["output"]:
        problems.append("%s: pyframes bt does not say it read a core of the remote process" % what)
    problems += sc.check_traceback(out["py-bt"]["output"], main, "%s: py-bt" % what)
    problems += sc.check_native(out["pyframes bt --native"]["output"], main, "%s: pyframes bt --native" % what)
    problems += sc.check_all(out["pyframes bt --all"]["output"], truth, "%s: pyframes bt --all" % what,
                             core=not what.endswith("live"))
    problems += sc.check_apply_all(out["thread apply all pyframes bt"]["output"], truth, truth["tasks"],
                                   "%s: thread apply all pyframes bt" % what)
    native_blocks = gs.apply_all_blocks(out["thread apply all pyframes bt --native"]["output"])
    for record in truth["threads"]:
        block = native_blocks.get(record["native_id"])
        if block is None:
            problems.append("%s: thread apply all pyframes bt --native: no block for LWP %d" % (what, record["native_id"]))
            continue
        problems += sc.check_native("\n".join(block[1]), record, "%s: --native, thread %s" % (what, record["label"]))
    return problems


def navigation_commands(truth):
    """For case_gdb_locals.py: frames #0 hold, #1 inner, #2 outer, #3 <module>."""
    main = main_record(truth)
    return [["select-lwp", main["native_id"]], "pyframes frame", "pyframes list", "pyframes up", "pyframes list",
            "pyframes locals", "pyframes print label", "pyframes print text", "pyframes print nosuch", "pyframes up",
            "pyframes locals", "pyframes print remaining", "pyframes down 2", "pyframes down", "pyframes frame 3",
            "pyframes up", "pyframes down 10", "pyframes frame 1", "pyframes list 1,3", "pyframes frame 9",
            "pyframes list 0", "pyframes up x"]


def check_navigation(results, truth, what):
    main = main_record(truth)
    truth_locals = main["locals"]
    r = results[1:]  # after select-lwp
    p = []
    p += sc.check_shown_frame(r[0], main, 0, "%s: pyframes frame" % what)
    p += sc.check_listing(r[1], main, 0, "%s: pyframes list" % what)
    p += sc.check_shown_frame(r[2], main, 1, "%s: pyframes up" % what)
    p += sc.check_listing(r[3], main, 1, "%s: pyframes list after up" % what)
    p += sc.check_locals(r[4], truth_locals["inner"], "%s: pyframes locals in inner" % what)
    for result, name in ((r[5], "label"), (r[6], "text")):
        want = "%s = %s\n" % (name, truth_locals["inner"][name]["repr"])
        if result["output"] != want:
            p.append("%s: pyframes print %s: %r, Python: %r (%s)" % (what, name, result["output"], want, result["error"]))
    p += sc.check_error(r[7], ["nosuch", "inner"], "%s: pyframes print nosuch" % what)
    p += sc.check_shown_frame(r[8], main, 2, "%s: pyframes up (to outer)" % what)
    p += sc.check_locals(r[9], truth_locals["outer"], "%s: pyframes locals in outer" % what)
    want = "remaining = %s\n" % truth_locals["outer"]["remaining"]["repr"]
    if r[10]["output"] != want:
        p.append("%s: pyframes print remaining: %r, Python: %r" % (what, r[10]["output"], want))
    p += sc.check_shown_frame(r[11], main, 0, "%s: pyframes down 2" % what)
    p += sc.check_error(r[12], ["Bottom (innermost) Python frame selected"], "%s: pyframes down at #0" % what)
    p += sc.check_shown_frame(r[13], main, 3, "%s: pyframes frame 3" % what)
    p += sc.check_error(r[14], ["Initial (outermost) Python frame selected"], "%s: pyframes up at the top" % what)
    p += sc.check_shown_frame(r[15], main, 0, "%s: pyframes down 10 (clamped)" % what)
    p += sc.check_shown_frame(r[16], main, 1, "%s: pyframes frame 1" % what)
    listing = gs.parse_listing(r[17]["output"])
    if [n for _m, n, _t in listing] != [1, 2, 3]:
        p.append("%s: pyframes list 1,3 listed %s (%s)" % (what, [n for _m, n, _t in listing], r[17]["error"]))
    p += sc.check_error(r[18], ["no Python frame #9", "#0-#3"], "%s: pyframes frame 9" % what)
    p += sc.check_error(r[19], ["'0' is not a line number"], "%s: pyframes list 0" % what)
    p += sc.check_error(r[20], ["'x' is not a positive number"], "%s: pyframes up x" % what)
    return p


def thread_selection_commands(truth):
    """Each thread keeps its own selected Python frame, as gdb keeps one per thread."""
    a, b = truth["threads"][0]["native_id"], truth["threads"][1]["native_id"]
    return [["select-lwp", a], "pyframes up", ["select-lwp", b], "pyframes frame", ["select-lwp", a], "pyframes frame",
            "frame 1", "pyframes bt --all --native", "frame"]


def check_thread_selection(results, truth, what):
    a, b = truth["threads"][0], truth["threads"][1]
    return (sc.check_shown_frame(results[1], a, 1, "%s: up in thread %s" % (what, a["label"])) +
            sc.check_shown_frame(results[3], b, 0, "%s: frame in thread %s" % (what, b["label"])) +
            sc.check_shown_frame(results[5], a, 1, "%s: back in thread %s" % (what, a["label"])) +
            check_gdb_frame_kept(results[6:9], truth, what))


def check_gdb_frame_kept(results, truth, what):
    """`pyframes bt --all --native` visits every thread, then gives back gdb's selected thread and
    frame (here frame 1 of the first thread)."""
    problems = [] if not results[1]["error"] else ["%s: bt --all --native: %s" % (what, results[1]["error"])]
    blocks = gs.all_blocks(results[1]["output"])
    for record in truth["threads"]:
        block = blocks.get(record["native_id"])
        if block is None:
            problems.append("%s: bt --all --native: no block for thread %s" % (what, record["label"]))
        else:
            problems += sc.check_native("\n".join(block[1]), record, "%s: bt --all --native, %s" % (what, record["label"]))
    if not results[2]["output"].startswith("#1 "):
        problems.append("%s: gdb's selected frame after bt --all --native: %r" % (what, results[2]["output"][:80]))
    return problems


def run_program(args, targets, program, workdir):
    target = targets.start(program)
    truth = target.wait_ready()
    truth["tasks"] = [int(t) for t in os.listdir("/proc/%d/task" % target.pid)]
    truth["native_threads"] = sorted(set(truth["tasks"]) - set(r["native_id"] for r in truth["threads"]))
    name = os.path.basename(program)
    if args.group == "live":
        target_args = ["-p", str(target.pid)]
        what = "%s live" % name
    elif args.group == "remote":
        target_args = ["-ex", "target remote | exec gdbserver - --attach %d" % target.pid]
        what = "%s remote" % name
    else:
        core = core_of(target, truth, workdir)
        target.kill()
        target_args = [args.python, core]
        what = "%s core" % name
    commands = stack_commands(truth)
    if "case_gdb_locals" in name:
        commands += navigation_commands(truth)
    if "case_threads" in name:
        commands += thread_selection_commands(truth)
    results = gs.session(args.loader, target_args, commands, workdir)
    problems = check_stacks(results[:7], truth, what)
    if "case_gdb_locals" in name:
        problems += check_navigation(results[7:7 + len(navigation_commands(truth))], truth, what)
    if "case_threads" in name:
        problems += check_thread_selection(results[7:], truth, what)
    if args.group == "core":
        os.unlink(core)
    return problems


def core_of(target, truth, workdir):
    """gcore's core of the target (the same gcore the core tests use), or the kernel's (SIGABRT)
    when gcore wrote the stacks of its threads as zeros: gdb 13 cannot read the guard pages
    glibc 2.43 puts inside thread stacks, and says so (see core/*/threads)."""
    from core_targets import gcore_with_output, kernel_core_of, threads_in_ranges, zeroed_ranges
    core, output = gcore_with_output(target.pid, os.path.join(workdir, "core"))
    if not threads_in_ranges(target.pid, truth["tasks"], zeroed_ranges(target.pid, output)):
        return core
    os.unlink(core)
    resource.prlimit(target.pid, resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    return kernel_core_of(target, target.dir)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--group", choices=("live", "core", "remote"), required=True)
    parser.add_argument("--python", required=True)
    parser.add_argument("--loader", required=True)
    args = parser.parse_args()
    if args.group == "remote" and shutil.which("gdbserver") is None:
        print("SKIP gdbserver is not installed (apt-get install gdbserver)")
        return 77
    workdir = tempfile.mkdtemp(prefix="gdb-test-")
    problems = []
    # Through gdbserver gdb writes a core of the whole process for each stop, at a few MB/s: the
    # program with locals, navigation and a thread without Python state covers that path.
    programs = PROGRAMS[-1:] if args.group == "remote" else PROGRAMS
    try:
        for program in programs:
            with Targets(args.python, INTEGRATION_PROGRAMS, workdir) as targets:
                problems += run_program(args, targets, program, workdir)
    except Skip as skip:
        print("SKIP %s" % skip)
        return 77
    except (TargetError, gs.GdbFailure) as error:
        problems.append(str(error))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    for problem in problems:
        print("FAIL " + problem)
    if problems:
        return 1
    print("ok: %d programs, %s, %s" % (len(programs), args.group, args.python))
    return 0


if __name__ == "__main__":
    sys.exit(main())
