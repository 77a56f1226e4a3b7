"""Self-recording test programs: they write their ground truth (truth.json: pid, threads and
the lines they block on) once they are where they say, then their blocking threads sleep there.
Shared by the pyframes integration tests (tests/pyframes/live) and the core-file tests
(tests/pyframes/core), which both start such programs, must not read them a moment too early, and must
kill every one of them, even when ctest kills the driver on a timeout.
"""
import ctypes
import json
import os
import signal
import subprocess
import time

PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)


def die_with_parent():
    """A subprocess preexec_fn: the child gets SIGKILL when the driver dies."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


class KillAtExit(object):
    """A with-block that kills everything it started when it ends, whatever happened in between.
    Subclasses add what they start with keep(); each kept object has kill()."""

    def __init__(self):
        self.started = []

    def keep(self, target):
        self.started.append(target)
        return target

    def popen_quiet(self, argv):
        """A helper process (not a self-recording program) with no input or output."""
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, preexec_fn=die_with_parent)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for target in self.started:
            target.kill()
        return False


class TargetError(Exception):
    """A target program that did not get ready: it exited, or wrote no truth, or never slept."""


def thread_state(pid, tid):
    """The scheduler state letter of thread `tid` of `pid` (R, S, D, T, ...), None when gone."""
    try:
        # errors="replace": from 3.14 Python names OS threads, and the kernel cuts a name
        # at 15 bytes, possibly inside a UTF-8 character.
        with open("/proc/%d/task/%d/stat" % (pid, tid), errors="replace") as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.rfind(")") + 2:].split()[0]


def wait_truth(process, truth_path, name, log, timeout):
    """The truth `process` writes at truth_path, once it is there; TargetError when the process
    exits first (with `log()` in the message) or `timeout` seconds pass. process None: a writer
    that is not this script's child (a worker of a launcher), waited for by time alone."""
    deadline = time.monotonic() + timeout
    while not os.path.exists(truth_path):
        if process is not None and process.poll() is not None:
            raise TargetError("%s exited early (status %s): %s" % (name, process.returncode, log()))
        if time.monotonic() > deadline:
            raise TargetError("%s wrote no ground truth within %ss" % (name, timeout))
        time.sleep(0.02)
    with open(truth_path, encoding="utf-8") as f:
        return json.load(f)


def wait_asleep(pid, tids, name, timeout):
    """Waits (at most `timeout` seconds) until every thread in `tids` has been seen asleep, then
    a moment more: a thread seen asleep once is in time.sleep, so it has returned from
    publishing the truth."""
    deadline = time.monotonic() + timeout
    while not all(thread_state(pid, tid) == "S" for tid in tids):
        if time.monotonic() > deadline:
            raise TargetError("%s: threads %s never went to sleep" % (name, tids))
        time.sleep(0.01)
    time.sleep(0.05)


def recorded_threads(threads, records, problems):
    """(label, thread as read, its record) for each thread the program recorded (`records`, from
    its truth) among `threads` (what was read: dicts with thread_id); a recorded thread that was
    not read is one problem line instead."""
    read = {t["thread_id"]: t for t in threads}
    for record in records:
        label = "thread %s" % record["label"]
        thread = read.get(record["thread_id"])
        if thread is None:
            problems.append("%s (id %#x) was not read" % (label, record["thread_id"]))
            continue
        yield label, thread, record
