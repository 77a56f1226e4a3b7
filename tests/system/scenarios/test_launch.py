#!/usr/bin/env python3
"""Tests of launch.py without NCCL: rank environment, output prefixes, exit codes, hang
detection by progress records, --timeout, --keep-hung, and that no process (rank or
grandchild) survives any way the launcher ends.

usage: test_launch.py [--python PY]   (PY runs the ranks; default: this interpreter)
Exit 0 when every check passes; otherwise 1, naming the failed checks.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
LAUNCH = os.path.join(HERE, "launch.py")
FAILURES = []


def check(ok, what):
    print("%s: %s" % ("ok" if ok else "FAILED", what))
    if not ok:
        FAILURES.append(what)


# Waits here end early on the state they wait for; only a real failure (a launcher or rank that
# never ends, a process that is never killed) reaches these deadlines, however loaded the machine.
DEADLINE_S = 60  # well under ctest's 120 s for the whole test: a real failure fails here, with a message


def launch(args, program, python, timeout=DEADLINE_S, **kwargs):
    command = [sys.executable, LAUNCH] + args + ["--", python, "-c", program]
    return subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout,
                          universal_newlines=True, **kwargs)


def cmdline(pid):
    try:
        with open("/proc/%s/cmdline" % pid, "rb") as f:
            return f.read()
    except (IOError, OSError):
        return b""


def processes_with(marker):
    """pids whose command line contains `marker` (ours only: the marker is a fresh uuid)."""
    return [int(name) for name in os.listdir("/proc") if name.isdigit() and marker.encode() in cmdline(name)]


def is_rank(pid):
    """A rank of SLEEPER (its program starts the grandchild), not the grandchild itself."""
    return b"subprocess" in cmdline(pid)


def wait_gone(marker, seconds=DEADLINE_S, which=lambda pid: True):
    """Waits until no process with `marker` (that `which` accepts) is left; returns those left."""
    def left():
        return [pid for pid in processes_with(marker) if which(pid)]

    deadline = time.time() + seconds
    while time.time() < deadline and left():
        time.sleep(0.05)
    return left()


# A rank that starts a grandchild, then sleeps: both carry the marker in their command line.
SLEEPER = """
import subprocess, sys, time
subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)  # {marker}'])
print('started', flush=True)
time.sleep(600)  # {marker}
"""


def test_environment_output_and_exit_code(python):
    program = ("import os, sys\n"
               "keys = ['RANK', 'WORLD_SIZE', 'LOCAL_RANK', 'LOCAL_WORLD_SIZE']\n"
               "print(' '.join(k + '=' + os.environ[k] for k in keys))\n"
               "print('rdv=' + str(os.path.isdir(os.environ['HANGSHIM_RENDEZVOUS'])))\n"
               "sys.exit(int(os.environ['RANK']) * 2)\n")
    r = launch(["-n", "3"], program, python)
    check(r.returncode == 4, "exit code is the worst rank's (got %d)" % r.returncode)
    for rank in range(3):
        line = "[rank %d] RANK=%d WORLD_SIZE=3 LOCAL_RANK=%d LOCAL_WORLD_SIZE=3" % (rank, rank, rank)
        check(line in r.stdout.splitlines(), "rank %d environment, forwarded with its prefix" % rank)
        check("[rank %d] rdv=True" % rank in r.stdout, "rank %d has a rendezvous directory" % rank)


def test_hang_kills_everything(python, work):
    marker = uuid.uuid4().hex
    status_path = os.path.join(work, "hang.json")
    r = launch(["-n", "2", "--hang-after", "1", "--status", status_path], SLEEPER.format(marker=marker), python)
    check(r.returncode == 3, "a job without progress is hung: exit 3 (got %d)" % r.returncode)
    with open(status_path) as f:
        status = json.load(f)
    # Detected by --hang-after (state "hung", not the 300 s default --timeout's "timeout"), and
    # not before --hang-after seconds passed. How much later is the machine's load, not a verdict.
    check(status["state"] == "hung" and status["elapsed"] >= 1,
          "hang detected by --hang-after, after at least --hang-after seconds (%s after %ss)" % (
              status["state"], status["elapsed"]))
    check(status["state"] == "hung" and status["running"] == [0, 1], "status: hung, ranks 0 and 1 running")
    check(not wait_gone(marker), "no rank or grandchild survives a hang")


def test_progress_is_not_a_hang(python):
    # --hang-after is the launcher's own window: it is kept well above what a loaded machine can
    # delay a rank that sleeps 0.2 s (or a busy rank's next clock tick), and each job still runs
    # longer than --hang-after, so a launcher that ignored the progress would call it hung.
    program = ("import os, sys, time\n"
               "sys.path.insert(0, %r)\n"
               "import progress\n"
               "progress.start(int(os.environ['RANK']))\n"
               "for i in range(40):\n"
               "    time.sleep(0.2)\n"
               "    progress.note_init()\n" % HERE)
    r = launch(["-n", "2", "--hang-after", "5"], program, python)
    check(r.returncode == 0, "ranks that keep writing progress for 8s are not hung after 5s (exit %d)" % r.returncode)
    busy_start = "import time\nend = time.time() + 8\nwhile time.time() < end:\n    pass\n"
    r = launch(["-n", "1", "--hang-after", "5"], busy_start, python)
    check(r.returncode == 0, "a rank busy starting up (CPU, no record yet) is not hung (exit %d)" % r.returncode)


def test_timeout(python):
    marker = uuid.uuid4().hex
    r = launch(["-n", "2", "--hang-after", "100", "--timeout", "1"], SLEEPER.format(marker=marker), python)
    check(r.returncode == 124, "--timeout ends the job with exit 124 (got %d)" % r.returncode)
    check(not wait_gone(marker), "no process survives a timeout")


def test_keep_hung(python, work):
    marker = uuid.uuid4().hex
    workdir = os.path.join(work, "kept")
    r = launch(["-n", "2", "--hang-after", "1", "--keep-hung", "--workdir", workdir],
               SLEEPER.format(marker=marker), python)
    check(r.returncode == 3, "--keep-hung still reports the hang (exit %d)" % r.returncode)
    pids = [int(word.split("=")[1]) for line in r.stdout.splitlines() if "left running" in line
            for word in line.split() if word.startswith("rank")]
    alive = processes_with(marker)
    check(len(pids) == 2 and all(p in alive for p in pids), "--keep-hung leaves the ranks running and prints their pids")
    for pid in pids:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
    check(not wait_gone(marker), "the caller can kill what --keep-hung left")


def test_launcher_signals(python):
    for sig in (signal.SIGTERM, signal.SIGKILL):
        marker = uuid.uuid4().hex
        proc = subprocess.Popen([sys.executable, LAUNCH, "-n", "2", "--hang-after", "100", "--",
                                 python, "-c", SLEEPER.format(marker=marker)],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        # The marker is in the command lines of the launcher, both ranks and their grandchildren.
        deadline = time.time() + DEADLINE_S
        while time.time() < deadline and len(processes_with(marker)) < 5:
            time.sleep(0.05)
        check(len(processes_with(marker)) == 5, "%s test: the launcher, both ranks and their grandchildren run"
              % sig.name)
        proc.send_signal(sig)
        proc.communicate(timeout=DEADLINE_S)
        if sig == signal.SIGTERM:
            left = wait_gone(marker)
            check(proc.returncode == 128 + sig and not left,
                  "SIGTERM to the launcher kills ranks and grandchildren (exit %d, left %s)" % (proc.returncode, left))
        else:
            # The launcher cannot act on SIGKILL; the ranks die with it (PR_SET_PDEATHSIG). Their
            # own children are the ranks' business: clean them up here.
            ranks_left = wait_gone(marker, which=is_rank)
            check(not ranks_left, "SIGKILL of the launcher takes the ranks with it (left %s)" % ranks_left)
            for pid in processes_with(marker):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            wait_gone(marker)


def test_usage(python):
    r = subprocess.run([sys.executable, LAUNCH, "-n", "2"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    check(r.returncode == 2 and "no program" in r.stdout, "a missing program is a usage error (exit 2)")
    r = subprocess.run([sys.executable, LAUNCH, "-n", "2", "--env", "NOEQUALS", "--", python, "-c", "pass"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    check(r.returncode == 2 and "NAME=VALUE" in r.stdout, "--env without '=' is a usage error")
    r = subprocess.run([sys.executable, LAUNCH, "-n", "2", "--", "/nonexistent/program"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True)
    check(r.returncode == 2 and "cannot start /nonexistent/program" in r.stdout and "Traceback" not in r.stdout,
          "a program that cannot start is a one-line error (exit 2)")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--python", default=sys.executable)
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix="hangshim-test-launch-")
    try:
        test_environment_output_and_exit_code(args.python)
        test_hang_kills_everything(args.python, work)
        test_progress_is_not_a_hang(args.python)
        test_timeout(args.python)
        test_keep_hung(args.python, work)
        test_launcher_signals(args.python)
        test_usage(args.python)
    finally:
        subprocess.call(["rm", "-rf", work])
    if FAILURES:
        print("%d check(s) failed" % len(FAILURES))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
