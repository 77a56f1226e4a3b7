"""Target processes for the pyframes integration tests: start a program under a given
interpreter, wait for the ground truth it writes about itself, and always kill it.

Every target gets PR_SET_PDEATHSIG=SIGKILL, so it dies with the driver even when ctest kills
the driver on a timeout; Targets is a context manager that kills what it started on exit.
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))

from self_recording import (KillAtExit, TargetError, die_with_parent, thread_state,  # noqa: E402,F401
                            wait_asleep, wait_truth)

def utf8_environment():
    env = dict(os.environ)
    # Python 3.6 would use ASCII file names under the C locale; the non-ASCII case needs UTF-8.
    env["LC_ALL"] = "C.UTF-8"
    env["PYTHONIOENCODING"] = "utf-8"
    env.pop("PYTHONPATH", None)
    return env


class Target(object):
    def __init__(self, python, program, workdir, args=()):
        self.python = python
        self.program = program
        self.name = os.path.splitext(os.path.basename(program))[0]
        self.dir = tempfile.mkdtemp(prefix=self.name + "-", dir=workdir)
        self.truth_path = os.path.join(self.dir, "truth.json")
        self.log_path = os.path.join(self.dir, "stderr.txt")
        self.args = list(args)
        self.process = None
        self.truth = None

    @property
    def pid(self):
        return self.process.pid

    def start(self):
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                [self.python, self.program, self.truth_path] + self.args,
                cwd=self.dir, env=utf8_environment(), stdin=subprocess.DEVNULL,
                stdout=log, stderr=log, preexec_fn=die_with_parent)
        return self

    def log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace").strip()

    def wait_ready(self, timeout=60.0):
        """Waits for the ground truth, then for every blocking thread to be asleep."""
        self.truth = wait_truth(self.process, self.truth_path, self.name, self.log, timeout)
        blocking = [t["native_id"] for t in self.truth["threads"] if t.get("blocking")]
        wait_asleep(self.pid, blocking, self.name, timeout)
        return self.truth

    def thread_state(self, tid):
        return thread_state(self.pid, tid)

    def kill(self):
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
        if self.process is not None:
            self.process.wait()


class Targets(KillAtExit):
    """Starts programs and kills them all at the end, whatever happened in between."""

    def __init__(self, python, programs_dir, workdir):
        KillAtExit.__init__(self)
        self.python = python
        self.programs_dir = programs_dir
        self.workdir = workdir

    def start(self, program, args=()):
        path = program if os.path.isabs(program) else os.path.join(self.programs_dir, program)
        return self.keep(Target(self.python, path, self.workdir, args).start())

    def spawn(self, argv):
        """A non-Python helper process (e.g. sleep) that is killed like the others."""
        holder = Target(self.python, argv[0], self.workdir)
        holder.process = self.popen_quiet(argv)
        return self.keep(holder)


def read_text(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def untouched_problems(pid):
    """A target that pyframes read must run on as before: not stopped, not traced."""
    problems = []
    status = read_text("/proc/%d/status" % pid)
    if status is None:
        return ["process %d is gone" % pid]
    for task in os.listdir("/proc/%d/task" % pid):
        task_status = read_text("/proc/%d/task/%s/status" % (pid, task)) or ""
        fields = dict(line.split(":\t", 1) for line in task_status.splitlines() if ":\t" in line)
        state = fields.get("State", "?")[:1]
        if state in ("T", "t"):
            problems.append("thread %s of %d is left stopped (%s)" % (task, pid, fields.get("State")))
        if fields.get("TracerPid", "0").strip() != "0":
            problems.append("thread %s of %d is left traced by %s" % (task, pid, fields["TracerPid"].strip()))
    return problems


def cpu_ticks(pid, tid):
    stat = read_text("/proc/%d/task/%d/stat" % (pid, tid)) or ""
    fields = stat[stat.rfind(")") + 2:].split()
    return int(fields[11]) + int(fields[12]) if len(fields) > 12 else -1  # utime + stime
