"""libhangshim.so preloaded into every program in a directory (default /usr/bin) that answers
`--version` must change nothing: not its stdout, not its stderr, not its exit status. The shim
interposes dlsym/dlvsym in every process it is preloaded into (NCCL looked up by handle), so
any program that uses dlopen (plugins, language runtimes, NSS) goes through it.

Each program runs `PROG --version` with stdin from /dev/null, a 5 s limit, in an empty working
directory that is also its HOME: twice without the shim (only programs that finish in time and
answer the same both times are compared: their answer is deterministic), then once with the
environment `hangshim run` gives (LD_PRELOAD=libhangshim.so, HANGSHIM_DIR). Fails listing every
program whose answer differs with the shim; prints the counts.

    usr_bin_sweep.py --shim LIB [--dir /usr/bin] [--jobs 4]
"""

import argparse
import concurrent.futures
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time

# Never run, not even with --version: they could act on the machine or the session if they
# ignored the option (stop or restart the system, signal processes, change accounts or
# credentials), wait for a password on a terminal, or load the machine (stress-ng: the machine
# is shared).
NEVER_RUN = {
    "reboot", "halt", "poweroff", "shutdown", "init", "telinit", "systemctl", "runlevel",
    "login", "su", "sudo", "sudoedit", "passwd", "chpasswd", "chage", "chsh", "chfn", "gpasswd",
    "newgrp", "sg", "vipw", "vigr", "kill", "killall", "killall5", "pkill", "skill", "snice",
    "pkexec", "stress-ng", "wall", "write",
}
NEVER_RUN_PREFIXES = ("kill", "pkill")
LIMIT_S = 5


def candidates(directory):
    out = []
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if name in NEVER_RUN or name.startswith(NEVER_RUN_PREFIXES):
            continue
        try:
            st = os.stat(path)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and os.access(path, os.X_OK):
            out.append(path)
    return out


def run_once(path, workdir, extra_env):
    # Fixed hash seeds: Perl and Python scripts would otherwise order their output at random.
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": workdir, "LC_ALL": "C", "TERM": "dumb",
           "PERL_HASH_SEED": "0", "PYTHONHASHSEED": "0"}
    env.update(extra_env)
    try:
        p = subprocess.run([path, "--version"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, cwd=workdir, env=env, timeout=LIMIT_S,
                           start_new_session=True)  # no controlling terminal to wait on
    except subprocess.TimeoutExpired:
        return None
    except OSError as e:
        return ("oserror", str(e), b"")
    return (p.returncode, p.stdout, p.stderr)


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
    args = p.parse_args()
    root = tempfile.mkdtemp(prefix="hangshim-sweep-")
    os.mkdir(os.path.join(root, ".ledgers"), 0o700)
    started = time.monotonic()
    programs = candidates(os.path.abspath(args.dir))
    results = []
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = [pool.submit(sweep_one, path, root, {"LD_PRELOAD": os.path.abspath(args.shim)}) for path in programs]
            results = [f.result() for f in futures]
        ledgers = os.listdir(os.path.join(root, ".ledgers"))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    kinds = {}
    for _, kind, _, _ in results:
        kinds[kind] = kinds.get(kind, 0) + 1
    deterministic = kinds.get("same", 0) + kinds.get("differs", 0)
    print("%s: %d programs run, %d deterministic (%d too slow or waiting, %d answer differently each time, "
          "%d cannot start), %d unchanged with the shim, %d changed; %.0f s" %
          (args.dir, len(programs), deterministic, kinds.get("slow", 0), kinds.get("nondeterministic", 0),
           kinds.get("cannot start", 0),
           kinds.get("same", 0), kinds.get("differs", 0), time.monotonic() - started))
    for kind in ("slow", "nondeterministic", "cannot start"):
        names = sorted(os.path.basename(path) for path, k, _, _ in results if k == kind)
        if names:
            print("not compared (%s): %s" % (kind, " ".join(names)))
    failed = [describe(path, plain, shimmed) for path, kind, plain, shimmed in results if kind == "differs"]
    if ledgers:
        failed.append("ledgers were written by programs that never call NCCL: %s" % ledgers)
    if deterministic == 0:
        failed.append("no program could be compared")
    for line in failed:
        print("FAIL " + line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
