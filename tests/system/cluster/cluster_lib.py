"""What the cluster tests share: real daemons (munged, slurmctld, slurmd, sshd) started from the
Debian packages into a temporary directory and torn down by pid, whatever happens; a test that
cannot start them is skipped (exit 77) with its reason, never passed."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "..", "preload", "report"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "..", "common"))
from expect import Failure, expect  # noqa: E402,F401

SKIP = 77


class Skip(Exception):
    """A component this test needs cannot start here: the test is skipped with this reason."""


def need_root(what):
    if os.geteuid() != 0:
        raise Skip("%s must run as root (the daemons run as root with their state in a temporary directory)" % what)


def need_programs(*names):
    missing = [n for n in names if not (shutil.which(n) or shutil.which(n, path="/usr/sbin:/sbin"))]
    if missing:
        raise Skip("not installed: %s (scripts/setup.sh installs slurm-wlm, munge, pdsh, openssh-server)" %
                   ", ".join(missing))


def program(name):
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def tail(path, lines=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return "(no %s)" % path


class Daemons(object):
    """Processes started here, each in a session of its own, killed by pid (and process group)
    at stop(): SIGTERM, then SIGKILL for what is still there after 5 s."""

    def __init__(self, work):
        self.work = work
        self.procs = {}
        self.extra_pids = []  # processes the test learned of (a hung job's ranks): killed at the end
        self.cleanup_dirs = []  # empty directories the test had to create outside its own: removed at the end
        self.pid_dirs = []  # directories where processes started by a daemon record their pid (file names)

    def start(self, name, argv, env=None):
        log = open(os.path.join(self.work, name + ".out"), "w")
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env, start_new_session=True)
        log.close()
        self.procs[name] = proc
        return proc

    def running(self, name):
        proc = self.procs.get(name)
        return proc is not None and proc.poll() is None

    def stop_one(self, name):
        proc = self.procs.pop(name, None)
        if proc is None:
            return
        for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
            if proc.poll() is not None:
                break
            try:
                os.killpg(proc.pid, sig)
            except OSError:
                pass
            try:
                proc.wait(wait)
            except subprocess.TimeoutExpired:
                pass

    def stop(self):
        for directory in self.pid_dirs:
            try:
                self.extra_pids += [int(n) for n in os.listdir(directory) if n.isdigit()]
            except OSError:
                pass
        for pid in self.extra_pids:
            for kill in (os.killpg, os.kill):
                try:
                    kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        self.extra_pids = []
        for name in reversed(list(self.procs)):
            self.stop_one(name)
        for path in self.cleanup_dirs:
            try:
                os.rmdir(path)
            except OSError:
                pass


def wait_until(what, check, timeout, log=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise Skip("%s did not come up within %d s%s" % (what, timeout, (":\n" + tail(log)) if log else ""))


def run(argv, env=None, timeout=60, cwd=None):
    """(exit status, stdout, stderr, seconds)."""
    start = time.monotonic()
    try:
        p = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise Failure("%s did not end within %d s (stderr so far: %s)" %
                      (" ".join(argv[:4]), timeout, (e.stderr or b"")[-2000:]))
    return p.returncode, p.stdout, p.stderr, time.monotonic() - start


def one_line_of_its_own(script, code, err, words, label):
    """A failure the script explains itself: non-zero exit, its last stderr line its own and
    naming `words`, and no other program's lines on stderr."""
    lines = [l for l in err.splitlines() if l.strip()]
    expect(code != 0, "%s: exit 0 (stderr: %s)" % (label, err))
    expect(lines, "%s: exit %d and no message" % (label, code))
    foreign = [l for l in lines if not l.startswith(script + ": ")]
    expect(not foreign, "%s: lines not of %s's own on stderr: %s" % (label, script, foreign))
    missing = [w for w in words if w not in lines[-1]]
    expect(not missing, "%s: the message lacks %s: %s" % (label, missing, lines[-1]))
    return lines[-1]


def main_with_skip(name, body):
    """Runs body(); prints ok/FAIL/SKIP and returns the exit status (77: skipped)."""
    try:
        body()
    except Skip as e:
        print("SKIP %s: %s" % (name, e))
        return SKIP
    except Failure as e:
        print("FAIL %s: %s" % (name, e))
        return 1
    print("ok %s" % name)
    return 0
