"""Processes and cores for the core-file tests: start a self-recording program, wait until it
sleeps where it said it would, dump it with gcore or let the kernel dump it, always kill it.

Every target gets PR_SET_PDEATHSIG=SIGKILL so it dies with the driver even when ctest kills the
driver on a timeout; Targets kills whatever it started when the with-block ends.
"""
import glob
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))

from self_recording import KillAtExit, TargetError, die_with_parent, wait_asleep, wait_truth  # noqa: E402,F401


class Skip(Exception):
    """The environment cannot run this test (no gcore, core dumps piped to a handler...)."""


def _die_with_parent_and_dump():
    die_with_parent()
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def environment(extra=None):
    env = dict(os.environ)
    env["LC_ALL"] = "C.UTF-8"  # 3.6 would use ASCII file names under the C locale
    env["PYTHONIOENCODING"] = "utf-8"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["MALLOC_ARENA_MAX"] = "1"  # no 64 MB arena per thread: smaller cores, faster dumps
    env.pop("PYTHONPATH", None)
    env.update(extra or {})
    return env


class Target(object):
    def __init__(self, argv, workdir, env=None, dump_on_crash=False):
        self.dir = workdir
        self.truth_path = os.path.join(workdir, "truth.json")
        self.log_path = os.path.join(workdir, "stderr.txt")
        self.argv = list(argv) + [self.truth_path]
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                self.argv, cwd=workdir, env=environment(env), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                preexec_fn=_die_with_parent_and_dump if dump_on_crash else die_with_parent)
        self.truth = None

    @property
    def pid(self):
        return self.process.pid

    def log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace").strip()

    def wait_truth(self, timeout=60.0):
        self.truth = wait_truth(self.process, self.truth_path, self.argv, self.log, timeout)
        return self.truth

    def wait_asleep(self, timeout=60.0):
        """Ground truth written and every recording thread asleep on its recorded line."""
        self.wait_truth(timeout)
        tids = [t["native_id"] for t in self.truth["threads"] if t.get("blocking", True)]
        wait_asleep(self.pid, tids, "process %d" % self.pid, timeout)
        return self.truth

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


class Targets(KillAtExit):
    def start(self, argv, workdir, env=None, dump_on_crash=False):
        return self.keep(Target(argv, workdir, env, dump_on_crash))

    def spawn(self, argv):
        process = self.popen_quiet(argv)
        self.keep(_Plain(process))
        return process


class _Plain(object):
    def __init__(self, process):
        self.process = process

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


def gcore(pid, prefix):
    """Dumps a running process with gdb's gcore; returns the core's path."""
    return gcore_with_output(pid, prefix)[0]


# gdb copies a mapping into the core 1 MiB at a time; when a read fails it says so and writes
# the rest of that mapping as zeros (seen with gdb 13 on thread stacks whose guard pages lie
# inside the mapping, as glibc 2.43 places them).
GCORE_READ_FAILED = re.compile(r"Memory read failed for corefile section, \d+ bytes at (0x[0-9a-f]+)")


def zeroed_ranges(pid, gcore_output):
    """The (start, end) ranges gcore wrote as zeros: from each failed read to its mapping's end."""
    failed = [int(a, 16) for a in GCORE_READ_FAILED.findall(gcore_output)]
    ranges = []
    with open("/proc/%d/maps" % pid) as maps:
        for line in maps:
            start, end = (int(x, 16) for x in line.split()[0].split("-"))
            ranges += [(address, end) for address in failed if start <= address < end]
    return ranges


def stack_pointer(pid, tid):
    """A thread's stack pointer while it sleeps in a system call (/proc/PID/task/TID/syscall:
    number, six arguments, sp, pc), None when it is not in one."""
    with open("/proc/%d/task/%d/syscall" % (pid, tid)) as f:
        fields = f.read().split()
    return int(fields[-2], 16) if len(fields) == 9 else None


def threads_in_ranges(pid, tids, ranges):
    """The threads among `tids` whose stack pointer lies in one of `ranges`."""
    inside = []
    for tid in tids:
        sp = stack_pointer(pid, tid)
        if sp is not None and any(start <= sp < end for start, end in ranges):
            inside.append(tid)
    return inside


def gcore_with_output(pid, prefix):
    """gcore's core path and what gdb printed while writing it."""
    tool = shutil.which("gcore")
    if tool is None:
        raise Skip("gcore (from gdb) is not installed: apt-get install -y gdb")
    run = subprocess.run([tool, "-o", prefix, str(pid)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, timeout=120)
    path = "%s.%d" % (prefix, pid)
    if run.returncode != 0 or not os.path.exists(path):
        output = run.stdout.decode("utf-8", "replace")
        if "ptrace" in output.lower():
            raise Skip("gcore may not attach here (ptrace refused): %s" % output.strip().splitlines()[-1:])
        raise TargetError("gcore %d failed (status %d): %s" % (pid, run.returncode, output.strip()))
    return path, run.stdout.decode("utf-8", "replace")


def kernel_core_pattern():
    """The kernel's core_pattern, after checking that cores can be collected from it here;
    raises Skip when cores go to a handler (a pipe) or the size limit would cut them."""
    try:
        with open("/proc/sys/kernel/core_pattern") as f:
            pattern = f.read().strip()
    except OSError:
        raise Skip("cannot read /proc/sys/kernel/core_pattern")
    if pattern.startswith("|"):
        raise Skip("core_pattern pipes cores to a handler (%s); kernel cores cannot be collected here" % pattern)
    soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    if hard != resource.RLIM_INFINITY and hard < 512 << 20:
        raise Skip("the hard core-size limit is %d bytes (ulimit -Hc); kernel cores would be cut" % hard)
    if os.path.isabs(pattern) and not os.access(os.path.dirname(pattern), os.W_OK):
        raise Skip("core_pattern %s writes into a directory that is not writable here" % pattern)
    return pattern


def kernel_core_of(target, workdir):
    """Kills the (RLIMIT_CORE-raised, dump_on_crash) target with SIGABRT and returns the core the
    kernel wrote of it (in `workdir`, its working directory, for a relative core_pattern)."""
    pattern = kernel_core_pattern()
    started = time.time()
    target.process.send_signal(signal.SIGABRT)
    target.process.wait(timeout=120)
    core = find_kernel_core(pattern, workdir, target.pid, started)
    if core is None:
        raise Skip("the kernel wrote no core for pid %d (core_pattern %r, RLIMIT_CORE raised)" % (target.pid, pattern))
    return core


def find_kernel_core(pattern, workdir, pid, since):
    """The core the kernel wrote for `pid` (started at time `since`) following `pattern`."""
    out, i = "", 0
    while i < len(pattern):
        if pattern[i] == "%" and i + 1 < len(pattern):
            spec = pattern[i + 1]
            out += "%" if spec == "%" else str(pid) if spec in "pP" else "*"
            i += 2
        else:
            out += glob.escape(pattern[i])
            i += 1
    try:
        with open("/proc/sys/kernel/core_uses_pid") as f:
            if f.read().strip() == "1" and "%p" not in pattern:
                out += ".%d" % pid
    except OSError:
        pass
    location = out if os.path.isabs(pattern) else os.path.join(glob.escape(workdir), out)
    found = [p for p in glob.glob(location) if os.path.getmtime(p) >= since - 1]
    return max(found, key=os.path.getmtime) if found else None
