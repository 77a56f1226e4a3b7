"""Waiting for a self-recording test program: it writes its ground truth (truth.json: its pid,
threads and the lines they block on) once it is where it says, then its blocking threads sleep
there. Shared by the pyframes integration tests (tests/integration) and the core-file tests
(tests/core), which both start such programs and must not read them a moment too early.
"""
import json
import os
import time


class TargetError(Exception):
    """A target program that did not get ready: it exited, or wrote no truth, or never slept."""


def thread_state(pid, tid):
    """The scheduler state letter of thread `tid` of `pid` (R, S, D, T, ...), None when gone."""
    try:
        with open("/proc/%d/task/%d/stat" % (pid, tid)) as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.rfind(")") + 2:].split()[0]


def wait_truth(process, truth_path, name, log, timeout):
    """The truth `process` writes at truth_path, once it is there; TargetError when the process
    exits first (with `log()` in the message) or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    while not os.path.exists(truth_path):
        if process.poll() is not None:
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
