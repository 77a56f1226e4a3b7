"""libhangshim.so preloaded into programs of a directory (default /usr/bin) that answer `--version`
must change nothing: not their stdout, not their stderr, not their exit status. The shim
interposes dlsym/dlvsym in every process it is preloaded into (NCCL looked up by handle), so
any program that uses dlopen (plugins, language runtimes, NSS) goes through it.

Which programs: by default a sample chosen for what they load, so that every shared library any
program of the directory names in its DT_NEEDED is loaded by at least one sampled program (a
greedy set cover), plus every static program kind and one script per interpreter (sh, bash, perl,
python3, ...). That covers the same kinds of process as the whole directory (~75 of ~1350
programs here) in seconds; --all runs every program (scripts/test.sh --full).

Each program runs `PROG --version` with stdin from /dev/null, a 5 s limit, in an empty working
directory that is also its HOME, in a session of its own: twice without the shim (only programs
that finish in time and answer the same both times are compared: their answer is deterministic),
then once with the environment `hangshim run` gives (LD_PRELOAD=libhangshim.so, HANGSHIM_DIR).
At each run's end its whole session is killed (a program that ignored --version and started a
child, a server or a debugger leaves nothing behind), and this process is the subreaper of every
program it starts: whatever left its session is found and killed at the end, and the test fails if
anything it started is still alive after that. Fails listing every program whose answer differs
with the shim; prints the counts.

    usr_bin_sweep.py --shim LIB [--dir /usr/bin] [--jobs 4] [--all]
"""

import argparse
import concurrent.futures
import ctypes
import os
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import time

# Never run, not even with --version: they could act on the machine or the session if they
# ignored the option (stop or restart the system, signal processes, change accounts or
# credentials), wait for a password on a terminal, load the machine (stress-ng: the machine is
# shared), or open a server or a debugger (mvnDebug starts a JVM with a JDWP server listening on
# port 8000; daemons; debconf's front ends wait for a configuration database).
NEVER_RUN = {
    "reboot", "halt", "poweroff", "shutdown", "init", "telinit", "systemctl", "runlevel", "systemd",
    "login", "su", "sudo", "sudoedit", "passwd", "chpasswd", "chage", "chsh", "chfn", "gpasswd",
    "newgrp", "sg", "vipw", "vigr", "kill", "killall", "killall5", "pkill", "skill", "snice",
    "pkexec", "stress-ng", "wall", "write", "jdb", "jdwp", "Xvfb", "Xorg", "X",
}
NEVER_RUN_PREFIXES = ("kill", "pkill", "debconf", "systemd-", "dbus-")
NEVER_RUN_PARTS = ("Debug", "daemon", "server", "serve")
LIMIT_S = 5


def candidates(directory):
    out = []
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if (name in NEVER_RUN or name.startswith(NEVER_RUN_PREFIXES)
                or any(part in name for part in NEVER_RUN_PARTS)):
            continue
        try:
            st = os.stat(path)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and os.access(path, os.X_OK):
            out.append(path)
    return out


def elf_needed(data):
    """The DT_NEEDED names of a 64-bit little-endian ELF file's bytes, ["<static>"] for one
    without a program interpreter; None for anything else (a script, another class)."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return None
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    loads, dynamic, has_interpreter = [], None, False
    for i in range(phnum):
        kind, _, offset, vaddr, _, filesz, _, _ = struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize)
        if kind == 1:
            loads.append((vaddr, offset, filesz))
        elif kind == 2:
            dynamic = (offset, filesz)
        elif kind == 3:
            has_interpreter = True
    if not has_interpreter or dynamic is None:
        return ["<static>"]
    strtab, offsets = None, []
    for at in range(dynamic[0], dynamic[0] + dynamic[1] - 15, 16):
        tag, value = struct.unpack_from("<qQ", data, at)
        if tag == 0:
            break
        if tag == 1:
            offsets.append(value)
        elif tag == 5:
            strtab = value
    base = next((strtab - vaddr + offset for vaddr, offset, size in loads
                 if strtab is not None and vaddr <= strtab < vaddr + size), None)
    if base is None:
        return []
    return [data[base + o:data.index(b"\0", base + o)].decode("utf-8", "replace") for o in offsets]


def what_it_loads(path):
    """The set of things a program loads, for choosing the sample: its DT_NEEDED libraries,
    "<static>", or "#!interpreter" for a script; None when it cannot be read."""
    try:
        with open(path, "rb") as f:
            data = f.read()
        needed = elf_needed(data)
    except (OSError, struct.error, ValueError, IndexError):
        return None
    if needed is not None:
        return set(needed)
    if data.startswith(b"#!"):
        words = data[2:].split(b"\n", 1)[0].split()
        if not words:
            return None
        interpreter = os.path.basename(words[0].decode("utf-8", "replace"))
        if interpreter == "env" and len(words) > 1:
            interpreter = os.path.basename(words[1].decode("utf-8", "replace"))
        return {"#!" + interpreter}
    return None


def sample(programs):
    """Programs, in name order, such that everything any of them loads is loaded by one of them:
    greedily the program that adds the most not yet covered (ties: the first by name)."""
    loads = {path: what for path, what in ((p, what_it_loads(p)) for p in programs) if what}
    wanted = set().union(*loads.values()) if loads else set()
    covered, picked = set(), []
    while covered != wanted:
        best = max(sorted(loads), key=lambda path: len(loads[path] - covered))
        picked.append(best)
        covered |= loads[best]
    return sorted(picked)


def run_once(path, workdir, extra_env):
    # Fixed hash seeds: Perl and Python scripts would otherwise order their output at random.
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": workdir, "LC_ALL": "C", "TERM": "dumb",
           "PERL_HASH_SEED": "0", "PYTHONHASHSEED": "0"}
    env.update(extra_env)
    try:
        # A session of its own: no controlling terminal to wait on, and one group to end.
        p = subprocess.Popen([path, "--version"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, cwd=workdir, env=env, start_new_session=True)
    except OSError as e:
        return ("oserror", str(e), b"")
    try:
        out, err = p.communicate(timeout=LIMIT_S)
    except subprocess.TimeoutExpired:
        end_session(p.pid)
        p.communicate()
        return None
    end_session(p.pid)  # whatever it started in its session and left running
    return (p.returncode, out, err)


def end_session(sid):
    try:
        os.killpg(sid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def become_subreaper():
    """Orphans of the programs run here become this process's children, not init's, so that
    whatever left its session can still be found (PR_SET_CHILD_SUBREAPER, Linux 3.4)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(36, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def descendants():
    """{pid: command} of every living process below this one."""
    parent_of, command = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                stat_line = f.read()
        except OSError:
            continue
        fields = stat_line[stat_line.rindex(")") + 2:].split()
        if fields[0] == "Z":
            continue
        parent_of[int(entry)] = int(fields[1])
        command[int(entry)] = stat_line[stat_line.index("(") + 1:stat_line.rindex(")")]
    below, frontier = {}, {os.getpid()}
    while frontier:
        frontier = {pid for pid, parent in parent_of.items() if parent in frontier and pid not in below}
        below.update((pid, command[pid]) for pid in frontier)
    return below


def reap(pids):
    """Waits for the given children and for every other exited child: once every run has been
    waited for, the only children left are orphans handed to this subreaper."""
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return


def end_survivors():
    """Kills every process still below this one once every run has ended (all were waited for,
    so what remains left its session); returns (killed, still alive) as "command[pid]" lists."""
    survivors = descendants()
    for pid in survivors:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 10
    alive = survivors
    while alive and time.monotonic() < deadline:
        reap(alive)
        time.sleep(0.05)
        alive = {pid: c for pid, c in descendants().items() if pid in survivors}
    reap(survivors)
    name = lambda items: sorted("%s[%d]" % (c, pid) for pid, c in items.items())
    return name(survivors), name(alive)


def sweep_one(path, root, shim_env):
    workdir = os.path.join(root, os.path.basename(path))
    os.mkdir(workdir)
    first = run_once(path, workdir, {})
    if first is None:
        return path, "slow", None, None
    if first[0] == "oserror":
        return path, "cannot start", None, None
    second = run_once(path, workdir, {})
    if second != first:
        return path, "nondeterministic", None, None
    env = dict(shim_env, HANGSHIM_DIR=os.path.join(root, ".ledgers"))
    shimmed = run_once(path, workdir, env)
    if shimmed == first:
        return path, "same", first, shimmed
    # Two equal answers can still be chance (subprocesses finishing in another order under
    # load): a change the shim makes is made every time, so it counts only if two more runs
    # with the shim differ as well and a third run without it agrees with the first two.
    if run_once(path, workdir, {}) != first:
        return path, "nondeterministic", None, None
    for _ in range(2):
        if run_once(path, workdir, env) == first:
            return path, "nondeterministic", None, None
    return path, "differs", first, shimmed


def describe(path, plain, shimmed):
    if shimmed is None:
        return "%s: ran past %d s with the shim" % (path, LIMIT_S)
    parts = []
    for what, a, b in zip(("exit status", "stdout", "stderr"), plain, shimmed):
        if a != b:
            parts.append("%s %r -> %r" % (what, a if what == "exit status" else a[-300:], b if what == "exit status" else b[-300:]))
    return "%s: %s" % (path, "; ".join(parts))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--shim", required=True)
    p.add_argument("--dir", default="/usr/bin")
    p.add_argument("--jobs", type=int, default=4)
    p.add_argument("--all", action="store_true", help="every program, not the sample (scripts/test.sh --full)")
    args = p.parse_args()
    become_subreaper()
    root = tempfile.mkdtemp(prefix="hangshim-sweep-")
    os.mkdir(os.path.join(root, ".ledgers"), 0o700)
    started = time.monotonic()
    everything = candidates(os.path.abspath(args.dir))
    programs = everything if args.all else sample(everything)
    results = []
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = [pool.submit(sweep_one, path, root, {"LD_PRELOAD": os.path.abspath(args.shim)}) for path in programs]
            results = [f.result() for f in futures]
        ledgers = os.listdir(os.path.join(root, ".ledgers"))
    finally:
        killed, alive = end_survivors()
        shutil.rmtree(root, ignore_errors=True)
    kinds = {}
    for _, kind, _, _ in results:
        kinds[kind] = kinds.get(kind, 0) + 1
    deterministic = kinds.get("same", 0) + kinds.get("differs", 0)
    print("%s: %d programs run (%s of %d), %d deterministic (%d too slow or waiting, %d answer differently each "
          "time, %d cannot start), %d unchanged with the shim, %d changed; %.0f s" %
          (args.dir, len(programs), "all" if args.all else "a sample covering what they load", len(everything),
           deterministic, kinds.get("slow", 0), kinds.get("nondeterministic", 0), kinds.get("cannot start", 0),
           kinds.get("same", 0), kinds.get("differs", 0), time.monotonic() - started))
    if not args.all:
        print("sampled: %s" % " ".join(os.path.basename(path) for path in programs))
    for kind in ("slow", "nondeterministic", "cannot start"):
        names = sorted(os.path.basename(path) for path, k, _, _ in results if k == kind)
        if names:
            print("not compared (%s): %s" % (kind, " ".join(names)))
    if killed:
        print("left running outside their sessions, killed: %s" % " ".join(killed))
    failed = [describe(path, plain, shimmed) for path, kind, plain, shimmed in results if kind == "differs"]
    if ledgers:
        failed.append("ledgers were written by programs that never call NCCL: %s" % ledgers)
    if deterministic == 0:
        failed.append("no program could be compared")
    if alive:
        failed.append("still running after SIGKILL: %s" % " ".join(alive))
    for line in failed:
        print("FAIL " + line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
