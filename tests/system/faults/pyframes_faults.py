"""Fault injection against the pyframes CLI: targets that die while being read, frames that
change under the reader, --lock interrupted by SIGKILL or by an error, and a syscall trace
proving that nothing is ever written to a target. Nothing may crash (a signal, a sanitizer
report), hang (a timeout), or fail without one error line naming the target.

    pyframes_faults.py --pyframes CLI --python PY --case exiting|changing|lock_kill|lock_error|read_only
"""

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "programs")
sys.path.insert(0, os.path.join(HERE, "..", "..", "common"))
from self_recording import thread_state  # noqa: E402


class Failure(Exception):
    pass


def expect(ok, what):
    if not ok:
        raise Failure(what)


def sanitizer_report(text):
    return "AddressSanitizer" in text or "runtime error:" in text or "ThreadSanitizer" in text or \
        "LeakSanitizer" in text


def run_pyframes(args, options, timeout=60):
    """Runs pyframes; fails on a crash, a hang, a sanitizer report or an unnamed error."""
    command = [args.pyframes] + options
    try:
        p = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                           universal_newlines=True, errors="replace")
    except subprocess.TimeoutExpired:
        raise Failure("pyframes hung (> %d s): %s" % (timeout, " ".join(command)))
    expect(p.returncode >= 0, "pyframes died of signal %d: %s\n%s" % (-p.returncode, " ".join(command), p.stderr))
    expect(p.returncode in (0, 1), "pyframes exit %d: %s\n%s" % (p.returncode, " ".join(command), p.stderr))
    expect(not sanitizer_report(p.stderr), "sanitizer report from %s:\n%s" % (" ".join(command), p.stderr))
    if p.returncode == 1:
        lines = [line for line in p.stderr.splitlines() if line.strip()]
        expect(lines, "exit 1 without a message: %s" % " ".join(command))
        for line in lines:
            expect(line.startswith("pyframes:") or line.startswith("warning:") or line.startswith("  "),
                   "an error line not in the pyframes format: %r" % line)
    return p


def start(python, argv, **kw):
    return subprocess.Popen([python] + argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, universal_newlines=True, **kw)


def wait_ready(process, timeout=30):
    deadline = time.monotonic() + timeout
    line = ""
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if line.strip() == "ready":
            return
        if not line and process.poll() is not None:
            break
    raise Failure("target did not start (%r)" % line)


def wait_for_zombie(pid, timeout=120):
    """Waits until `pid` has exited and is not yet reaped (state Z); the deadline is only for a
    process that never exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if thread_state(pid, pid) in (None, "Z"):  # the main thread's state is the process's
            return
        time.sleep(0.01)
    raise AssertionError("process %d did not exit within %d s" % (pid, timeout))


def kill(process):
    if process.poll() is None:
        process.kill()
    process.wait()


def case_exiting(args):
    """Processes that exit, finalize or unwind while they are read: every read ends with the
    stacks or one error line naming the process, alone and in parallel reads."""
    rng = random.Random(1)
    outcomes = {}
    for i in range(60):
        batch = []
        for _ in range(3):
            delay = rng.choice([0.0, 0.001, 0.005, 0.02, 0.05])
            mode = rng.choice(["return", "exit", "raise"])
            batch.append(start(args.python, [os.path.join(PROGRAMS, "short_lived.py"), str(delay), mode]))
        time.sleep(rng.choice([0.0, 0.01, 0.03]))
        if i % 10 == 0:
            # One process surely gone by the read: exited, not yet reaped (a zombie, decided from
            # its state, not by timing), so every run meets a dying process whatever the load.
            gone = start(args.python, [os.path.join(PROGRAMS, "short_lived.py"), "0", "return"])
            wait_for_zombie(gone.pid)
            batch.insert(0, gone)
        options = [str(p.pid) for p in batch]
        if i % 3 == 1:
            options = ["--locals"] + options
        if i % 3 == 2:
            options = ["--lock", "--json"] + options[:1]
        p = run_pyframes(args, options)
        outcomes[p.returncode] = outcomes.get(p.returncode, 0) + 1
        if p.returncode == 1:
            named = [pid for pid in options if pid.isdigit() and pid in p.stderr]
            expect(named, "an error that names no process: %s" % p.stderr)
        for process in batch:
            kill(process)
    print("outcomes (exit status: reads):", outcomes)
    expect(outcomes.get(1, 0) > 0, "no read ever met a dying process: the case tested nothing")


def case_changing(args):
    """Frames created and freed millions of times a second while being read: every read
    completes, and every frame of the target's file carries one of its functions' names."""
    target = start(args.python, [os.path.join(PROGRAMS, "busy_recursion.py")])
    try:
        wait_ready(target)
        names = {"spin_down", "spin_forever", "spin_main", "<module>"}
        program = os.path.join(PROGRAMS, "busy_recursion.py")
        frames_seen = 0
        for i in range(60):
            options = ["--json"] + (["--locals"] if i % 2 else []) + (["--lock"] if i % 5 == 4 else [])
            p = run_pyframes(args, options + [str(target.pid)])
            if p.returncode != 0:
                continue
            doc = json.loads(p.stdout)
            for process in doc["processes"]:
                for thread in process["threads"]:
                    for frame in thread["frames"]:
                        if frame.get("file") == program:
                            frames_seen += 1
                            expect(frame["function"] in names, "a frame of the program named %r" % frame["function"])
                            expect(1 <= frame["line"] <= 40, "a frame of the program at line %r" % frame["line"])
        expect(frames_seen > 100, "only %d frames of the program were read" % frames_seen)
        expect(target.poll() is None, "the target died while being read")
        print("frames of the program checked:", frames_seen)
    finally:
        kill(target)


def tracer_pids(pid):
    out = []
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return out
    for tid in tasks:
        try:
            with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                for line in f:
                    if line.startswith("TracerPid:"):
                        out.append(int(line.split()[1]))
        except OSError:
            pass
    return out


def thread_states(pid):
    states = (thread_state(pid, int(tid)) for tid in os.listdir("/proc/%d/task" % pid))
    return [state for state in states if state is not None]


def heartbeat(path):
    try:
        with open(path) as f:
            return int(f.read() or 0)
    except (OSError, ValueError):
        return 0


# How long a state may take to change before the test calls it a failure. Only a real failure
# reaches it: a target left stopped or traced stays so forever, while a loaded machine (CI on
# 2 cores, stress-ng beside it) merely schedules the target late.
STATE_DEADLINE_S = 120


def wait_until(condition, deadline_s=STATE_DEADLINE_S):
    deadline = time.monotonic() + deadline_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def expect_running(pid, beat_file, what):
    """The target is traced by nobody, none of its threads is stopped, and it makes progress:
    decided from its state (/proc TracerPid and thread states) and from its own progress marker
    (the heartbeat file moving past the value it had), never from how soon that happens."""
    def released():
        states = thread_states(pid)
        return not any(tracer_pids(pid)) and "t" not in states and "T" not in states

    expect(wait_until(released), "%s: still traced or stopped after %d s: tracers %s, thread states %s"
           % (what, STATE_DEADLINE_S, tracer_pids(pid), thread_states(pid)))
    before = heartbeat(beat_file)
    expect(wait_until(lambda: heartbeat(beat_file) > before),
           "%s: the heartbeat stayed at %d for %d s (the target does not run)" % (what, before, STATE_DEADLINE_S))


def case_lock_kill(args):
    """SIGKILL pyframes while --lock holds the target stopped: the kernel releases it and the
    target runs on. Retries until the kill landed inside the lock several times."""
    work = tempfile.mkdtemp(prefix="pyframes-lock-")
    beat = os.path.join(work, "beat")
    target = start(args.python, [os.path.join(PROGRAMS, "lock_target.py"), beat, "900"])
    caught = 0
    try:
        wait_ready(target)
        for attempt in range(60):
            reader = subprocess.Popen([args.pyframes, "--lock", "--locals", "--json", str(target.pid)],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 20
            while reader.poll() is None and time.monotonic() < deadline:
                if reader.pid in tracer_pids(target.pid):
                    reader.send_signal(signal.SIGKILL)
                    caught += 1
                    break
            reader.wait()
            expect_running(target.pid, beat, "attempt %d" % attempt)
            if caught >= 5:
                break
        print("pyframes killed while holding the lock: %d time(s)" % caught)
        expect(caught >= 3, "the kill landed inside the lock only %d time(s)" % caught)
    finally:
        kill(target)


def case_lock_error(args):
    """An error while the target is locked (it is not Python: discovered after the threads are
    stopped) returns one error line and leaves the target running."""
    work = tempfile.mkdtemp(prefix="pyframes-lock-")
    beat = os.path.join(work, "beat")
    script = 'n=0; while :; do n=$((n+1)); echo $n > %s.tmp; mv %s.tmp %s; sleep 0.01; done' % (beat, beat, beat)
    shell = subprocess.Popen(["/bin/sh", "-c", script], stdin=subprocess.DEVNULL)
    try:
        expect(wait_until(lambda: heartbeat(beat) > 0), "the shell target never wrote its heartbeat")
        for _ in range(5):
            p = run_pyframes(args, ["--lock", str(shell.pid)])
            expect(p.returncode == 1, "pyframes --lock on a shell: exit %d" % p.returncode)
            expect(str(shell.pid) in p.stderr and "not a CPython process" in p.stderr,
                   "the error does not say what is wrong: %s" % p.stderr)
            expect_running(shell.pid, beat, "after the error")
    finally:
        kill(shell)


def case_read_only(args):
    """pyframes never writes to a target: a syscall trace of reads with --lock and --locals
    shows no process_vm_writev, no PTRACE_POKE*/SETREGS, and /proc/PID/mem opened read-only."""
    target = start(args.python, [os.path.join(PROGRAMS, "busy_recursion.py")])
    try:
        wait_ready(target)
        trace = tempfile.mktemp(prefix="pyframes-strace-")
        for options in (["--locals"], ["--lock", "--locals"], ["--lock", "--json"]):
            command = ["strace", "-f", "-qq", "-o", trace, "-e", "trace=process_vm_writev,ptrace,open,openat,pwrite64,write",
                       args.pyframes] + options + [str(target.pid)]
            p = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120,
                               universal_newlines=True)
            expect(p.returncode in (0, 1), "pyframes under strace: exit %d: %s" % (p.returncode, p.stderr))
            with open(trace) as f:
                calls = f.read()
            os.unlink(trace)
            expect("process_vm_writev" not in calls, "pyframes called process_vm_writev")
            for request in re.findall(r"ptrace\((PTRACE_[A-Z_]+)", calls):
                expect(request in ("PTRACE_SEIZE", "PTRACE_INTERRUPT", "PTRACE_DETACH"),
                       "pyframes made a ptrace request that can change the target: %s" % request)
            mem_opens = re.findall(r'open(?:at)?\([^"]*"/proc/\d+/(?:task/\d+/)?mem", ([A-Z_|]+)', calls)
            for flags in mem_opens:
                expect("O_WRONLY" not in flags and "O_RDWR" not in flags, "/proc/PID/mem opened with %s" % flags)
            if "--lock" in options:
                expect("PTRACE_SEIZE" in calls and "PTRACE_DETACH" in calls, "--lock did not seize and detach")
        expect(target.poll() is None, "the target died")
    finally:
        kill(target)


CASES = {
    "exiting": case_exiting,
    "changing": case_changing,
    "lock_kill": case_lock_kill,
    "lock_error": case_lock_error,
    "read_only": case_read_only,
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pyframes", required=True)
    parser.add_argument("--python", required=True)
    parser.add_argument("--case", required=True, choices=sorted(CASES))
    args = parser.parse_args()
    try:
        CASES[args.case](args)
    except Failure as failure:
        print("FAIL:", failure)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
