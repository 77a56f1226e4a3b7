"""Waiting for a started program to be that program: shared by the tests that point a tool at
a non-Python process (`sleep`, a CPython 2.7) and must not read our own fork still on its way to
the exec, however loaded the machine."""
import os
import shutil
import time

# x86-64 system calls a process sleeping in `sleep` or Python 2's time.sleep is blocked in:
# select, nanosleep, clock_nanosleep, pselect6.
SLEEP_SYSCALLS = ("23", "35", "230", "270")


def wait_exec_asleep(pid, program, timeout=60.0):
    """Waits until `pid` runs `program` (a path, or a name looked up on PATH) and sleeps in its
    sleep call. Decided from /proc (the executable and the system call the process is blocked
    in), never from elapsed time: only a process that never gets there reaches the deadline."""
    program = os.path.realpath(shutil.which(program) or program)
    deadline = time.monotonic() + timeout
    while True:
        try:
            exe = os.path.realpath("/proc/%d/exe" % pid)
            with open("/proc/%d/syscall" % pid) as f:
                syscall = f.read().split()[0]
        except (IOError, OSError, IndexError):
            exe, syscall = None, None
        if exe == program and syscall in SLEEP_SYSCALLS:
            return
        if time.monotonic() > deadline:
            raise RuntimeError("%d never slept in %s (exe %s, syscall %s)" % (pid, program, exe, syscall))
        time.sleep(0.01)
