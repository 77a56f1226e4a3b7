#!/usr/bin/env python3
"""Starts N ranks of a program, like torchrun, and ends when they exit or hang.

usage: launch.py -n N [--timeout S] [--hang-after S] [--truth FILE] [--status FILE]
                 [--workdir DIR] [--keep-hung] [--dump-stacks] [--quiet] [--env K=V ...]
                 -- PROGRAM [ARGS...]

Each rank gets RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE (one node), HANGSHIM_RENDEZVOUS
(a fresh directory shared by the ranks: NCCL unique id, progress records, logs) and, with
--truth, HANGSHIM_SCENARIO_TRUTH. Output is forwarded with a "[rank N] " prefix.

The job ends when
  * every rank exited: exit code = the worst rank's (a signal counts as 128+N);
  * it is hung: some rank still runs and for --hang-after seconds no rank exited and no rank's
    progress record (written by ncclpy around every collective) changed (a rank that has not
    written its first record yet counts as progressing while it uses CPU): exit code 3;
  * --timeout seconds passed: exit code 124;
  * the launcher got SIGINT/SIGTERM/SIGHUP: exit code 128+signal.
Bad usage, or a program that cannot be started: a one-line error, exit code 2.
On a hang, --dump-stacks first has every running rank write its Python stacks (SIGUSR1,
faulthandler). --status FILE receives a JSON report (state, per rank: pid, running, exit code,
last progress record, stacks, log tail). Ranks still running are killed (each runs in its own
process group, which is killed whole) unless the job hung and --keep-hung was given: then they
are left running for the caller, their pids are printed, and the caller must kill them (and
remove the work directory). Nothing is left behind otherwise, whatever way the launcher ends.
"""

import argparse
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

EXIT_USAGE = 2
EXIT_HUNG = 3
EXIT_TIMEOUT = 124
POLL_SECONDS = 0.05


def parse_args(argv):
    if "--" not in argv:
        command, argv = [], argv
    else:
        cut = argv.index("--")
        argv, command = argv[:cut], argv[cut + 1:]
    p = argparse.ArgumentParser(prog="launch.py", description="Start N ranks; end on exit or hang.")
    p.add_argument("-n", "--nproc", type=int, required=True, help="number of ranks")
    p.add_argument("--timeout", type=float, default=300.0, help="wall-clock limit in seconds (300)")
    p.add_argument("--hang-after", type=float, default=5.0,
                   help="seconds without progress after which a job counts as hung (5)")
    p.add_argument("--truth", help="file where the scenario writes its expected diagnosis")
    p.add_argument("--status", help="file for the JSON report")
    p.add_argument("--workdir", help="rendezvous/log directory (default: a fresh temporary one)")
    p.add_argument("--keep-hung", action="store_true", help="leave the ranks of a hung job running")
    p.add_argument("--dump-stacks", action="store_true", help="on a hang, collect Python stacks")
    p.add_argument("--quiet", action="store_true", help="do not forward the ranks' output")
    p.add_argument("--env", action="append", default=[], metavar="K=V", help="extra environment")
    args = p.parse_args(argv)
    if not command:
        p.error("no program: give it after --")
    if args.nproc < 1:
        p.error("-n must be at least 1")
    for kv in args.env:
        if "=" not in kv or kv.startswith("="):
            p.error("--env needs NAME=VALUE, got %r" % kv)
    args.command = command
    return args


def _die_with_parent():
    """In the child: SIGKILL when the launcher dies, however it dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


class Rank(object):
    def __init__(self, rank, proc, log_path):
        self.rank = rank
        self.proc = proc
        self.log_path = log_path
        self.offset = 0
        self.partial = b""
        self.exit_code = None

    @property
    def running(self):
        return self.exit_code is None


def exit_code_of(returncode):
    return 128 - returncode if returncode < 0 else returncode


def read_progress(workdir, rank):
    try:
        with open(os.path.join(workdir, "progress.%d.json" % rank), "rb") as f:
            first = f.readline()
        return json.loads(first.decode("utf-8"))
    except (IOError, OSError, ValueError):
        return None  # not written yet, or caught mid-write: the next poll reads it


class Forwarder(object):
    """Copies new lines of each rank's log to our stdout with a rank prefix."""

    def __init__(self, quiet):
        self.quiet = quiet

    def pump(self, rank, final=False):
        try:
            with open(rank.log_path, "rb") as f:
                f.seek(rank.offset)
                data = f.read()
        except (IOError, OSError):
            return
        rank.offset += len(data)
        data = rank.partial + data
        lines = data.split(b"\n")
        rank.partial = lines.pop()
        if final and rank.partial:
            lines.append(rank.partial)
            rank.partial = b""
        if self.quiet:
            return
        out = getattr(sys.stdout, "buffer", sys.stdout)
        for line in lines:
            out.write(b"[rank %d] " % rank.rank + line + b"\n")
        if lines:
            sys.stdout.flush()


def log_tail(path, lines=30):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace").splitlines()[-lines:]
    except (IOError, OSError):
        return []


def kill_all(ranks):
    for r in ranks:
        try:
            os.killpg(r.proc.pid, signal.SIGKILL)  # the rank and anything it started
        except OSError:
            pass
    for r in ranks:
        try:
            r.proc.wait()
        except OSError:
            pass


def collect_stacks(workdir, ranks, wait_seconds=2.0):
    """SIGUSR1 to every running rank; their faulthandler writes stacks.<rank>.txt."""
    paths = {}
    for r in ranks:
        if r.running:
            paths[r.rank] = os.path.join(workdir, "stacks.%d.txt" % r.rank)
            try:
                os.kill(r.proc.pid, signal.SIGUSR1)
            except OSError:
                pass
    deadline = time.time() + wait_seconds
    sizes = {}
    while time.time() < deadline:
        now = {k: (os.path.getsize(p) if os.path.exists(p) else 0) for k, p in paths.items()}
        if all(now.values()) and now == sizes:
            break
        sizes = now
        time.sleep(0.1)
    stacks = {}
    for k, p in paths.items():
        try:
            with open(p) as f:
                stacks[k] = f.read()
        except (IOError, OSError):
            stacks[k] = None
    return stacks


def write_json(path, data):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
    os.rename(tmp, path)


def rank_env(args, workdir, rank):
    env = dict(os.environ)
    env.update({
        "RANK": str(rank), "WORLD_SIZE": str(args.nproc), "LOCAL_RANK": str(rank),
        "LOCAL_WORLD_SIZE": str(args.nproc), "GROUP_RANK": "0", "NODE_RANK": "0",
        "MASTER_ADDR": "127.0.0.1", "HANGSHIM_RENDEZVOUS": workdir, "PYTHONUNBUFFERED": "1",
    })
    if args.truth:
        env["HANGSHIM_SCENARIO_TRUTH"] = os.path.abspath(args.truth)
    if args.dump_stacks:
        env["HANGSHIM_SCENARIO_STACKS"] = "1"
    for kv in args.env:
        name, value = kv.split("=", 1)
        env[name] = value
    return env


def cpu_ticks(pid):
    """utime + stime of a process (all its threads), in clock ticks; None when unreadable."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (IOError, OSError, IndexError, ValueError):
        return None


def supervise(args, ranks, workdir, forwarder, interrupted):
    """Polls until the job exits, hangs, times out or we are interrupted; returns the state.

    Progress: a rank exits, or a rank's progress record changes. Before a rank has written its
    first record (interpreter start-up, imports, waiting for rank 0's id), CPU time it uses also
    counts, so a slow start on a loaded machine is not taken for a hang."""
    start = last_progress = time.time()
    seen = {}
    ticks = {}
    while True:
        for r in ranks:
            forwarder.pump(r)
            if r.running and r.proc.poll() is not None:
                r.exit_code = exit_code_of(r.proc.returncode)
                last_progress = time.time()
        for r in ranks:
            record = read_progress(workdir, r.rank)
            events = record.get("events") if record else None
            if events is not None and seen.get(r.rank) != events:
                seen[r.rank] = events
                last_progress = time.time()
            elif events is None and r.running:
                used = cpu_ticks(r.proc.pid)
                if used is not None and used != ticks.get(r.rank):
                    ticks[r.rank] = used
                    last_progress = time.time()
        now = time.time()
        if interrupted:
            return "interrupted"
        if not any(r.running for r in ranks):
            return "exited"
        if now - start > args.timeout:
            return "timeout"
        if now - last_progress > args.hang_after:
            return "hung"
        time.sleep(POLL_SECONDS)


def main(argv):
    args = parse_args(argv)
    own_workdir = args.workdir is None
    workdir = os.path.abspath(args.workdir or tempfile.mkdtemp(prefix="hangshim-launch-"))
    if not os.path.isdir(workdir):
        os.makedirs(workdir)
    interrupted = []

    def on_signal(signum, frame):
        interrupted.append(signum)

    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)

    ranks = []
    forwarder = Forwarder(args.quiet)
    keep = False
    start = time.time()
    try:
        for rank in range(args.nproc):
            log_path = os.path.join(workdir, "rank.%d.log" % rank)
            with open(log_path, "wb") as log:
                try:
                    proc = subprocess.Popen(args.command, stdin=subprocess.DEVNULL, stdout=log,
                                            stderr=subprocess.STDOUT, env=rank_env(args, workdir, rank),
                                            start_new_session=True,
                                            preexec_fn=None if args.keep_hung else _die_with_parent)
                except OSError as e:
                    print("launch.py: cannot start %s: %s (check the program path)" % (args.command[0], e),
                          file=sys.stderr)
                    return EXIT_USAGE
            ranks.append(Rank(rank, proc, log_path))
        state = supervise(args, ranks, workdir, forwarder, interrupted)
        stacks = collect_stacks(workdir, ranks) if state == "hung" and args.dump_stacks else {}
        status = {
            "state": state, "world_size": args.nproc, "elapsed": round(time.time() - start, 3),
            "hang_after": args.hang_after, "workdir": workdir, "command": args.command,
            "exited": [r.rank for r in ranks if not r.running],
            "running": [r.rank for r in ranks if r.running],
            "ranks": [{
                "rank": r.rank, "pid": r.proc.pid, "running": r.running, "exit_code": r.exit_code,
                "progress": read_progress(workdir, r.rank), "stacks": stacks.get(r.rank),
                "log": r.log_path, "log_tail": log_tail(r.log_path),
            } for r in ranks],
        }
        keep = state == "hung" and args.keep_hung
        status["kept_running"] = keep
        if args.status:
            write_json(args.status, status)
        for r in ranks:
            forwarder.pump(r, final=True)
        if keep:
            running = [r for r in ranks if r.running]
            print("launch.py: hung; left running: %s (workdir %s)" % (
                " ".join("rank%d=%d" % (r.rank, r.proc.pid) for r in running), workdir))
            return EXIT_HUNG
        if state == "exited":
            return max(r.exit_code for r in ranks)
        if state == "hung":
            print("launch.py: no progress for %gs; ranks still running: %s; killing them" % (
                args.hang_after, ",".join(str(r.rank) for r in ranks if r.running)), file=sys.stderr)
            return EXIT_HUNG
        if state == "timeout":
            print("launch.py: timeout after %gs; killing the ranks" % args.timeout, file=sys.stderr)
            return EXIT_TIMEOUT
        return 128 + interrupted[0]
    finally:
        if not keep:
            kill_all(ranks)
            if own_workdir:
                shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
