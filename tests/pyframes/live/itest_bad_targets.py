"""Bad input for pyframes: each must give one error line `pyframes: process N: why (what to do)`,
exit status 1 (2 for usage errors), no crash, no hang, and leave the target as it was."""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
from exec_wait import wait_exec_asleep  # noqa: E402

from itest_checks import compare_frames, compare_process, parse_document, python_frames, run_pyframes
from itest_targets import untouched_problems

ERROR_LINE = re.compile(r"^pyframes: process (\d+): \S.* \(\S.*\)$")
# pyenv's CPython 2.7 wherever pyenv lives (scripts/pyenv-pythons.sh finds it), else Debian's.
PYENV_PYTHONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "scripts", "pyenv-pythons.sh")
PYTHON2_CANDIDATES = subprocess.run([PYENV_PYTHONS, "2.7.*", "python2.7"], stdout=subprocess.PIPE,
                                    universal_newlines=True, check=True).stdout.split() + ["/usr/bin/python2.7"]
MAX_FRAMES = 4096  # ReadOptions::max_frames
EXIT_KINDS = ("not_found", "process_gone", "not_python", "bad_address", "corrupt", "io")


def error_problems(run, pid, kinds=None, status=1):
    """Checks a failed run: status, one well-formed error line naming `pid`, and (with --json,
    unless kinds is None) the document's one error and its kind."""
    problems = []
    if run.returncode != status:
        problems.append("exit status %s, expected %d: %s" % (run.returncode, status, run.describe()))
    lines = run.stderr_lines()
    if len(lines) != 1:
        problems.append("%d stderr lines, expected one: %r" % (len(lines), run.stderr))
    elif not ERROR_LINE.match(lines[0]) or ERROR_LINE.match(lines[0]).group(1) != str(pid):
        problems.append("error line not `pyframes: process %d: why (what to do)`: %r" % (pid, lines[0]))
    if kinds is not None and "--json" in run.argv and run.returncode == status:
        errors = json.loads(run.stdout).get("errors", [])
        if len(errors) != 1 or errors[0].get("kind") not in kinds:
            problems.append("JSON errors %r, expected one of kind %s" % (errors, "/".join(kinds)))
    return problems


def check_bad_target(report, args, name, pid, kinds, must_mention=()):
    problems = []
    for mode in ([], ["--json"]):
        run = run_pyframes(args.pyframes, mode + [pid])
        problems += error_problems(run, pid, kinds)
        for phrase in must_mention:
            if phrase.lower() not in run.stderr.lower():
                problems.append("the error does not mention %r: %r" % (phrase, run.stderr.strip()))
    report.result(name, problems, run.stderr.strip())


def check_truncated(report, args, target):
    run = run_pyframes(args.pyframes, ["--json", target.pid])
    problems = error_problems(run, target.pid)
    if run.returncode in (0, 1) and run.stdout:
        processes, _ = parse_document(run)
        record = target.truth["threads"][0]
        threads = [t for t in processes[target.pid]["threads"] if t["thread_id"] == record["thread_id"]]
        if not threads:
            problems.append("the corrupted thread is not reported")
        else:
            thread = threads[0]
            got = python_frames(thread)
            if not thread.get("truncated"):
                problems.append("the stack is not marked truncated (%d frames)" % len(got))
            problems += compare_frames(got[:len(record["frames"])], record["frames"])
            if len(got) > MAX_FRAMES:
                problems.append("%d frames: more than the bound %d" % (len(got), MAX_FRAMES))
            if "truncated" not in run.stderr:
                problems.append("stderr does not say the stack was truncated: %r" % run.stderr)
    problems += untouched_problems(target.pid)
    report.result("corrupt frame chain (%s)" % target.truth["mode"], problems, run.stderr.strip())


def check_permission_denied(report, args, targets):
    target = targets.start("case_methods.py")
    target.wait_ready()
    problems = []
    for mode in ([], ["--json"]):
        run = run_pyframes(args.pyframes, mode + [target.pid], as_user="nobody")
        problems += error_problems(run, target.pid, ("permission_denied",))
        for phrase in ("same user or root", "ptrace_scope", "CAP_SYS_PTRACE"):
            if phrase not in run.stderr:
                problems.append("the error does not say %r: %r" % (phrase, run.stderr.strip()))
    denied = run.stderr.strip()
    problems += untouched_problems(target.pid)
    run = run_pyframes(args.pyframes, ["--json", target.pid])
    if run.returncode != 0:
        problems.append("as root afterwards: %s" % run.describe())
    else:
        problems += compare_process(parse_document(run)[0][target.pid], target.truth)
    report.result("permission denied (pyframes as nobody, target root)", problems, denied)


def check_exit_mid_read(report, args, targets):
    """Targets that exit while being read, at different moments of their life: every read ends
    with status 0 (complete output) or 1 (one error line), quickly."""
    problems = []
    outcomes = {0: 0, 1: 0}
    gone = 0
    for delay in ("0", "0.02", "0.1", "0.3"):
        target = targets.start("case_exit_soon.py", [delay])
        while target.process.poll() is None:
            run = run_pyframes(args.pyframes, ["--json", target.pid], timeout=20)
            if run.returncode == 0:
                parse_document(run)
            elif run.returncode == 1:
                # Either the read failed (one error in the document) or, while the process still
                # ran, a stack changed under the reader and came back marked truncated.
                problems += error_problems(run, target.pid)
                document = json.loads(run.stdout) if run.stdout else {}
                errors = document.get("errors", [])
                cut = [t for p in document.get("processes", []) for t in p["threads"] if t.get("truncated")]
                if not (len(errors) == 1 and errors[0]["kind"] in EXIT_KINDS) and not (not errors and cut):
                    problems.append("exit status 1 without one error of kind %s or a truncated stack: %r" % (
                        "/".join(EXIT_KINDS), run.stdout[:300]))
            else:
                problems.append(run.describe())
            if run.returncode in outcomes:
                outcomes[run.returncode] += 1
            gone += "exited while it was being read" in run.stderr
        target.kill()
    report.result("process exits while being read", problems,
                  "%d complete reads, %d clean errors, %d of them 'exited while it was being read'" % (
                      outcomes[0], outcomes[1], gone))


def newest_known_minor(pyframes):
    """The newest CPython 3.x that `pyframes --version` says it reads ("reads CPython 3.6-3.15")."""
    run = run_pyframes(pyframes, ["--version"])
    match = re.search(r"CPython 3\.\d+-3\.(\d+)", run.stdout)
    if run.returncode != 0 or not match:
        raise AssertionError("pyframes --version names no range of versions: %s" % run.describe())
    return int(match.group(1))


def check_future_read(report, args, target, name, newest):
    """A newer CPython whose _Py_DebugOffsets still read as the newest known layout: the stacks
    are those the process recorded, the version the one it claims, with one warning saying how
    it was read; the text output carries the same warning."""
    future = target.truth["future_version"]
    problems, wanted = [], []
    run = run_pyframes(args.pyframes, ["--json", target.pid])
    if run.returncode != 0:
        problems.append(run.describe())
    else:
        process = parse_document(run)[0][target.pid]
        problems += compare_process(process, dict(target.truth, python=future))
        warnings = process.get("warnings", [])
        wanted = [w for w in warnings if "newer than pyframes knows" in w and "3.%d's" % newest in w]
        if len(wanted) != 1 or future not in wanted[0]:
            problems.append("warnings %r: expected one naming %s and the layout of 3.%d" % (warnings, future, newest))
    text = run_pyframes(args.pyframes, [target.pid])
    if text.returncode != 0 or "warning: CPython %s is newer than pyframes knows" % future not in text.stdout:
        problems.append("text output without the warning: %s" % text.describe())
    report.result(name, problems, wanted[0] if len(wanted) == 1 else "")


def check_future_version(report, args, targets):
    """Py_Version and the _Py_DebugOffsets version rewritten to 3.99. Only the newest version
    pyframes knows has the debug-offsets layout a 3.99 is read with: it is read, with a warning.
    Older ones must be refused, since their tables do not read as the newest layout (the check
    against the target says why), and so must a version with no debug offsets at all."""
    target = targets.start("case_future_version.py")
    target.wait_ready()
    if not target.truth["patched"]:
        print("skip future version: CPython %s keeps no version number a process can rewrite for outside tools"
              % target.truth["python"])
        return
    newest = newest_known_minor(args.pyframes)
    version = tuple(int(x) for x in target.truth["python"].split(".")[:2])
    future = target.truth["future_version"]
    name = "CPython from the future (%s rewritten to %s)" % (" and ".join(target.truth["patched"]), future)
    if "_Py_DebugOffsets.version" in target.truth["patched"] and version == (3, newest):
        check_future_read(report, args, target, name + ", read as 3.%d" % newest, newest)
    else:
        mention = [future.rsplit(".", 1)[0]]
        if "_Py_DebugOffsets.version" in target.truth["patched"]:
            mention.append("do not read as 3.%d's" % newest)
        check_bad_target(report, args, name, target.pid, ("unsupported_version",), mention)
    report.result("future-version target untouched", untouched_problems(target.pid))


def group_errors(report, args, targets):
    check_future_version(report, args, targets)
    for mode in ("garbage", "cycle"):
        target = targets.start("case_corrupt.py", [mode])
        target.wait_ready()
        check_truncated(report, args, target)
    check_permission_denied(report, args, targets)
    check_exit_mid_read(report, args, targets)


def which(name):
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        candidate = os.path.join(directory, name)
        if os.access(candidate, os.X_OK):
            return candidate
    return name


def group_common(report, args, targets):
    sleeper = targets.spawn(["sleep", "1000"])
    wait_exec_asleep(sleeper.pid, which("sleep"))
    check_bad_target(report, args, "not a Python process (sleep)", sleeper.pid, ("not_python",))
    report.result("non-Python target untouched", untouched_problems(sleeper.pid))

    gone = subprocess.Popen(["true"])
    gone.wait()
    check_bad_target(report, args, "PID gone", gone.pid, ("not_found", "process_gone"))

    python2 = [p for p in PYTHON2_CANDIDATES if os.path.exists(p)]
    if python2:
        old = targets.spawn([python2[0], "-c", "import time; time.sleep(1000)"])
        wait_exec_asleep(old.pid, python2[0])
        check_bad_target(report, args, "CPython 2.7 (%s)" % python2[0], old.pid, ("unsupported_version",), ["2.7"])
    else:
        print("skip CPython 2.7: none of %s exists" % ", ".join(PYTHON2_CANDIDATES))

    good = targets.start("case_recursion.py")
    good.wait_ready()
    run = run_pyframes(args.pyframes, ["--json", good.pid, sleeper.pid])
    problems = error_problems(run, sleeper.pid, ("not_python",))
    if run.stdout:
        processes, _ = parse_document(run)
        problems += compare_process(processes[good.pid], good.truth) if good.pid in processes else ["good PID missing"]
    report.result("one bad PID among good ones", problems)

    problems = []
    for argv, status in (([], 2), (["--bogus", "1"], 2), (["0"], 2), (["--help"], 0), (["--version"], 0)):
        run = run_pyframes(args.pyframes, argv)
        if run.returncode != status:
            problems.append("%s: %s" % (argv, run.describe()))
        if status == 2 and (len(run.stderr_lines()) != 1 or not run.stderr.startswith("pyframes: usage: ")):
            problems.append("%s: usage error line %r" % (argv, run.stderr))
    report.result("usage errors exit 2, --help/--version exit 0", problems)

    # A name that is not digits is a core file: one that does not exist is that target's
    # problem (exit 1, one line naming it), like a PID that is gone.
    run = run_pyframes(args.pyframes, ["no-such-core-file"])
    problems = []
    if run.returncode != 1 or len(run.stderr_lines()) != 1 or "no-such-core-file" not in run.stderr:
        problems.append(run.describe())
    report.result("a missing core file is one error line, exit 1", problems)
