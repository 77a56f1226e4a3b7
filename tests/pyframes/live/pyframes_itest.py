#!/usr/bin/env python3
"""Integration tests of the pyframes CLI against real interpreters.

    pyframes_itest.py --pyframes BUILD/pyframes/pyframes --python /path/to/python3 --group frames

Groups (one ctest each per interpreter):
  frames   every stack shape (recursion, methods, decorators, lambdas, generators,
           comprehensions, C callbacks, exec'd code, non-ASCII names, asyncio): all targets
           started at once and read in ONE pyframes call (--json), then each also as text
  threads  several named threads, a raw _thread thread named only by /proc comm
  spin     a thread spinning in pure Python holding the GIL, without and with --lock
  errors   bad targets of this interpreter: corrupt frame chains, a version from the future,
           permission denied, a process exiting while it is read
  common   bad targets independent of the interpreter: not Python, PID gone, Python 2, usage
Ground truth comes from each program itself (programs/stackrecord.py). Every target is
killed at the end, also on failure.
"""
import argparse
import os
import platform
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import itest_bad_targets  # noqa: E402
from itest_checks import check_text, compare_process, parse_document, run_pyframes  # noqa: E402
from itest_targets import TargetError, Targets, cpu_ticks, untouched_problems  # noqa: E402

FRAME_CASES = ["case_recursion.py", "case_methods.py", "case_decorators.py", "case_lambdas.py",
               "case_generators.py", "case_comprehensions.py", "case_callbacks.py", "case_exec.py",
               "case_nonascii.py", "case_asyncio.py"]


class Report(object):
    def __init__(self):
        self.failures = 0

    def result(self, name, problems, detail=""):
        if problems:
            self.failures += 1
            print("FAIL %s" % name)
            for problem in problems[:40]:
                print("     %s" % problem)
            if len(problems) > 40:
                print("     ... %d more" % (len(problems) - 40))
        else:
            print("ok   %s%s" % (name, " (%s)" % detail if detail else ""))
        sys.stdout.flush()


def read_and_compare(report, args, targets_and_gil, extra_args=()):
    """One pyframes --json call for all targets; each target compared with its ground truth."""
    pids = [target.pid for target, _ in targets_and_gil]
    run = run_pyframes(args.pyframes, ["--json"] + list(extra_args) + pids)
    if run.returncode != 0:
        report.result("pyframes --json %s" % " ".join(extra_args), [run.describe()])
        return
    processes, _ = parse_document(run)
    for target, gil_holders in targets_and_gil:
        process = processes.get(target.pid)
        problems = ["pid %d missing from the document" % target.pid] if process is None else \
            compare_process(process, target.truth, gil_holders)
        frames = sum(len(t["frames"]) for t in target.truth["threads"])
        report.result("%s %s(json)" % (target.name, " ".join(extra_args) + " " if extra_args else ""), problems,
                      "%d threads, %d frames; %d PIDs read in %.0f ms" % (
                          len(target.truth["threads"]), frames, len(pids), run.seconds * 1000))


def check_text_output(report, args, target):
    run = run_pyframes(args.pyframes, [target.pid])
    problems = [run.describe()] if run.returncode != 0 or run.stderr else check_text(run.stdout, target.truth)
    report.result("%s (text)" % target.name, problems)


def group_frames(report, args, targets):
    started = [targets.start(case) for case in FRAME_CASES]
    for target in started:
        target.wait_ready()
    read_and_compare(report, args, [(t, ()) for t in started])
    for target in started:
        check_text_output(report, args, target)
    report.result("targets untouched", sum((untouched_problems(t.pid) for t in started), []))


def group_threads(report, args, targets):
    target = targets.start("case_threads.py")
    target.wait_ready()
    read_and_compare(report, args, [(target, ())])
    check_text_output(report, args, target)
    report.result("targets untouched", untouched_problems(target.pid))


def group_spin(report, args, targets):
    target = targets.start("case_spin.py")
    target.wait_ready()
    spinner = [t for t in target.truth["threads"] if t["label"] == "spinner"][0]
    for extra in ((), ("--lock",)):
        for attempt in range(3):  # a live, unlocked read of a running thread: several samples
            read_and_compare(report, args, [(target, ("spinner",))], extra)
        before = cpu_ticks(target.pid, spinner["native_id"])
        problems = untouched_problems(target.pid)
        subprocess.run(["sleep", "0.3"])
        if cpu_ticks(target.pid, spinner["native_id"]) <= before:
            problems.append("the spinning thread made no progress after pyframes %s" % " ".join(extra))
        report.result("target runs on after pyframes %s" % " ".join(extra), problems)
    check_text_output(report, args, target)


def run_group(description, group_names, prefix, run):
    """The integration drivers' main(): parses --pyframes, --python and --group, runs
    run(report, args, targets, workdir) in a fresh work directory whose targets are all killed
    at the end (a target that never got ready is one failed check), prints the verdict and
    returns the exit status."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--pyframes", required=True)
    parser.add_argument("--python", required=True)
    parser.add_argument("--group", required=True, choices=group_names)
    args = parser.parse_args()
    version = subprocess.run([args.python, "-c", "import platform; print(platform.python_version())"],
                             stdout=subprocess.PIPE, universal_newlines=True).stdout.strip()
    print("interpreter: %s (CPython %s); driver: Python %s" % (args.python, version, platform.python_version()))
    report = Report()
    with tempfile.TemporaryDirectory(prefix=prefix) as workdir:
        os.chmod(workdir, 0o755)
        with Targets(args.python, os.path.join(HERE, "programs"), workdir) as targets:
            try:
                run(report, args, targets, workdir)
            except TargetError as error:
                report.result("target setup", [str(error)])
    print("%s: group %s on CPython %s: %s" % ("FAILED" if report.failures else "PASSED", args.group, version,
                                              "%d failures" % report.failures if report.failures else "all checks ok"))
    return 1 if report.failures else 0


def main():
    groups = {"frames": group_frames, "threads": group_threads, "spin": group_spin,
              "errors": itest_bad_targets.group_errors, "common": itest_bad_targets.group_common}
    return run_group(__doc__.split("\n")[0], list(groups), "pyframes-itest-",
                     lambda report, args, targets, workdir: groups[args.group](report, args, targets))


if __name__ == "__main__":
    sys.exit(main())
