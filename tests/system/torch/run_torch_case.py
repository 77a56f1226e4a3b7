#!/usr/bin/env python3
"""Tests against real PyTorch (Debian's python3-torch on /usr/bin/python3.11: gloo, torchrun).

    run_torch_case.py --case uneven|barrier|dataloader|commcheck --python /usr/bin/python3.11
                      --pyframes P --hangshim H --shim LIBHANGSHIM --hang-dump SCRIPT --comm-check SCRIPT

uneven, barrier, dataloader: a 2-rank torchrun gloo job (torch_job.py) under `hangshim run`,
that hangs as its scenario says and records where each process blocks (rank and worker pids,
stacks). Checked against those records: `pyframes --children TORCHRUN` (text and --json: each
rank's blocked frames; a DataLoader worker named as its rank's worker with its pid, never as a
rank), `scripts/hang-dump TORCHRUN` (the stacks, the no-NCCL words, never a verdict), and
`hangshim report`/`watch` (the shim is loaded and saw no NCCL call; --json kind no_data, never
healthy). commcheck: scripts/gpu-comm-check.py --backend gloo under torchrun with 2 ranks: one OK
line per rank, with the rank, world size and sum it claims; then with rank 1 never arriving
(comm_check_absent.py): rank 0's FAIL line within --timeout and the watchdog's grace. Exit 77 (skipped, with the reason)
when PyTorch or torchrun is missing. Every process started is killed by process group at the end.
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
from expect import Failure, expect  # noqa: E402
from rank_lists import rank_text  # noqa: E402  (the rank list as pyframes writes it)

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def state(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.rfind(")") + 2:].split()[0]


def run(argv, timeout=120, env=None):
    started = time.monotonic()
    p = subprocess.run([str(a) for a in argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=timeout, env=env)
    p.seconds = time.monotonic() - started
    return p


def skip_reason(args):
    if not os.path.exists(args.python):
        return "%s is not installed" % args.python
    p = subprocess.run([args.python, "-c", "import torch, torch.distributed as d; assert d.is_gloo_available()"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if p.returncode != 0:
        return "import torch fails on %s (apt-get install python3-torch): %s" % (
            args.python, (p.stdout.strip().splitlines() or ["?"])[-1])
    if shutil.which("torchrun") is None:
        return "no torchrun on PATH (python3-torch installs /usr/bin/torchrun)"
    return None


def torchrun_argv(script, script_args):
    # torch 1.13 spells --nproc_per_node; Debian's 1.13 on Python 3.11 needs --redirects/--tee
    # (their default "0" is not a member of Python 3.11's IntFlag iteration: AttributeError).
    return [shutil.which("torchrun"), "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
            "--master_port", str(free_port()), "--redirects", "1", "--tee", "1", script] + list(script_args)


class Job(object):
    """`hangshim run --dir DIR -- torchrun ...` in a session of its own (hangshim run execs the
    launcher: the job's pid is torchrun's), killed by process group at the end."""

    def __init__(self, args, work, script_argv):
        os.makedirs(work, exist_ok=True)
        self.ledgers = os.path.join(work, "ledgers")
        self.log = open(os.path.join(work, "job.log"), "w")
        argv = [args.hangshim, "run", "--quiet", "--shim", args.shim, "--dir", self.ledgers, "--"] + script_argv
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        env.pop("HANGSHIM_DIR", None)
        self.process = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=self.log,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        self.pid = self.process.pid

    def log_tail(self):
        self.log.flush()
        with open(self.log.name, errors="replace") as f:
            return f.read()[-3000:]

    def kill(self):
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()
        self.log.close()


def wait_records(job, records, names, timeout=150):
    """The records `names` (rank0, worker1, ...), once their processes sleep where they said."""
    deadline = time.monotonic() + timeout
    found = {}
    while True:
        for name in names:
            path = os.path.join(records, name + ".json")
            if name not in found and os.path.exists(path):
                with open(path) as f:
                    found[name] = json.load(f)
        if len(found) == len(names):
            blocked = [r for r in found.values() if r["blocking"]]
            if all(state(r["pid"]) == "S" for r in blocked):
                time.sleep(0.5)  # still asleep a moment later: in the blocking call
                if all(state(r["pid"]) == "S" for r in blocked):
                    return found
        expect(job.process.poll() is None, "the job ended (status %s):\n%s" % (job.process.poll(), job.log_tail()))
        expect(time.monotonic() < deadline, "records %s of %s after %d s:\n%s" % (
            sorted(found), names, timeout, job.log_tail()))
        time.sleep(0.2)


def python_frames(thread):
    return [(f.get("function"), f.get("file"), f.get("line")) for f in thread.get("frames", [])
            if f.get("kind", "python") == "python"]


def check_stacks(args, job, records, checks):
    """pyframes --children TORCHRUN, --json then text, against the records."""
    p = run([args.pyframes, "--json", "--children", job.pid])
    expect(p.returncode == 0, "pyframes --json exit %d:\n%s" % (p.returncode, p.stderr))
    document = json.loads(p.stdout)
    by_pid = {x["pid"]: x for x in document["processes"]}
    rank_pids = {r["rank"]: r["pid"] for name, r in records.items() if name.startswith("rank")}
    for name, record in sorted(records.items()):
        process = by_pid.get(record["pid"])
        expect(process is not None, "%s (pid %d) not read: %s" % (name, record["pid"], sorted(by_pid)))
        expect(process.get("rank") == str(record["rank"]), "%s: rank %r" % (name, process.get("rank")))
        owner = rank_pids[record["rank"]] if name.startswith("worker") else None
        expect(process.get("worker_of") == owner, "%s (pid %d): worker_of %r, expected %r" % (
            name, record["pid"], process.get("worker_of"), owner))
        if not record["blocking"]:
            continue
        main = [t for t in process["threads"] if t.get("native_id") == record["pid"]]
        expect(main, "%s: no main thread in %s" % (name, process["threads"]))
        got = python_frames(main[0])
        want = [(f["function"], f["file"], f["line"]) for f in record["frames"]]
        expect(got[-len(want):] == want, "%s: pyframes' outer frames\n  %s\nare not the recorded\n  %s" % (
            name, got[-len(want):], want))
    ranks_read = sorted(x["pid"] for x in document["processes"] if "rank" in x and "worker_of" not in x)
    expect(ranks_read == sorted(rank_pids.values()), "processes read as ranks: %s, the ranks are %s" % (
        ranks_read, sorted(rank_pids.values())))
    workers = {x["pid"]: x for x in document["processes"] if "worker_of" in x}
    members = document["merged"]["members"]
    expect(sorted((m["pid"], m.get("worker_of")) for m in members) ==
           sorted((x["pid"], x.get("worker_of")) for x in document["processes"]),
           "merged members disagree with the processes: %s" % members)
    checks.append("pyframes --json --children: %d ranks, %d workers, stacks as recorded (%.1f s)" % (
        len(ranks_read), len(workers), p.seconds))

    p = run([args.pyframes, "--children", job.pid])
    expect(p.returncode == 0, "pyframes exit %d:\n%s" % (p.returncode, p.stderr))
    header = "%d processes (ranks 0-1" % len(document["processes"])
    if workers:
        worker_ranks = sorted(int(x["rank"]) for x in workers.values())
        header += ", %s %s %s %s" % ("rank" if len(set(worker_ranks)) == 1 else "ranks", rank_text(worker_ranks),
                                      "worker pid" if len(workers) == 1 else "workers pids", rank_text(workers))
    header += "): main threads merged, outermost frame first"
    lines = p.stdout.split("\n")
    expect(lines[0] == header, "header %r, expected %r" % (lines[0], header))
    for name, record in sorted(records.items()):
        if not record["blocking"]:
            continue
        label = ("rank %d worker pid %d" % (record["rank"], record["pid"]) if name.startswith("worker")
                 else "rank %d" % record["rank"])
        innermost = record["frames"][0]
        where = "%s (%s:%d)" % (innermost["function"], innermost["file"], innermost["line"])
        expect(re.search(r"(├─|└─) %s[ :(]" % re.escape(label), p.stdout) or lines[0].startswith(label),
               "no branch labelled %r in:\n%s" % (label, p.stdout))
        expect(where in p.stdout, "%s's blocking frame %s is not in:\n%s" % (name, where, p.stdout))
    expect("(2 processes)" not in p.stdout, "a rank counted twice:\n%s" % p.stdout)
    checks.append("pyframes --children (text): header %r" % header)
    return document


def check_no_nccl(args, job, records, checks):
    """hangshim report and watch: the shim is loaded, no NCCL call; never healthy."""
    rank_pids = [r["pid"] for name, r in records.items() if name.startswith("rank")]
    expect(not os.listdir(job.ledgers), "a gloo job left ledgers: %s" % os.listdir(job.ledgers))
    p = run([args.hangshim, "report", job.ledgers])
    expect(p.returncode == 1, "report: exit %d\n%s%s" % (p.returncode, p.stdout, p.stderr))
    expect("NO NCCL CALLS" in p.stderr and all("pid %d" % pid in p.stderr for pid in rank_pids + [job.pid]),
           "report does not say the shim is loaded in torchrun %d and ranks %s:\n%s" % (job.pid, rank_pids, p.stderr))
    expect("pyframes --children %d" % job.pid in p.stderr, "report names no pyframes command for torchrun:\n%s" % p.stderr)
    expect("healthy" not in (p.stdout + p.stderr).lower(), "report says healthy:\n%s" % p.stdout)
    p = run([args.hangshim, "report", "--json", job.ledgers])
    doc = json.loads(p.stdout)
    expect(doc["verdict"]["kind"] == "no_data", "--json kind %s" % doc["verdict"]["kind"])
    listed = {x["pid"] for x in doc["shim_processes"]}
    everyone = set(rank_pids + [r["pid"] for r in records.values()] + [job.pid])
    expect(everyone <= listed, "shim_processes %s lack %s" % (sorted(listed), sorted(everyone - listed)))
    # Ranks and their workers are named as pyframes names them (a worker inherits RANK).
    owners = {r["rank"]: r["pid"] for name, r in records.items() if name.startswith("rank")}
    entries = {x["pid"]: x for x in doc["shim_processes"]}
    expect(entries[job.pid]["rank"] == "" and entries[job.pid]["worker_of"] == 0, "torchrun: %s" % entries[job.pid])
    for name, record in records.items():
        owner = owners[record["rank"]] if name.startswith("worker") else 0
        entry = entries[record["pid"]]
        expect(entry["rank"] == str(record["rank"]) and entry["worker_of"] == owner,
               "%s (pid %d): shim_processes entry %s, expected rank %d, worker_of %d" % (name, record["pid"], entry, record["rank"], owner))
    text = run([args.hangshim, "report", job.ledgers]).stderr
    for name, record in records.items():
        label = ("pid %d (worker of rank %d pid %d)" % (record["pid"], record["rank"], owners[record["rank"]])
                 if name.startswith("worker") else "pid %d (rank %d)" % (record["pid"], record["rank"]))
        expect(label in text or len(listed) > 8, "report does not name %s as %r:\n%s" % (name, label, text))
    p = run([args.hangshim, "watch", "--interval", "1", "--timeout", "2", job.ledgers], timeout=60)
    expect(p.returncode == 1 and "the shim is loaded in %d processes" % len(listed) in p.stdout and
           "pyframes --children %d" % job.pid in p.stderr, "watch (exit %d):\n%s%s" % (p.returncode, p.stdout, p.stderr))
    checks.append("hangshim report/watch: no NCCL calls, shim loaded in %d processes, kind no_data" % len(listed))


def check_hang_dump(args, job, records, document, checks):
    p = run([args.hang_dump, job.pid, "--dir", job.ledgers, "--pyframes", args.pyframes, "--hangshim", args.hangshim])
    out = p.stdout + p.stderr
    expect(p.returncode == 1, "hang-dump exit %d (the report has no verdict: 1):\n%s" % (p.returncode, out))
    expect("NO NCCL CALLS" in out and "the stacks below are the diagnosis" in out, "no no-NCCL words:\n%s" % out)
    expect("start the job with 'hangshim run" not in out and "healthy" not in out.lower(), "misleading:\n%s" % out)
    expect("%d processes (ranks 0-1" % len(document["processes"]) in out, "no merged stacks:\n%s" % out)
    for name, record in records.items():
        if record["blocking"]:
            f = record["frames"][0]
            expect("%s (%s:%d)" % (f["function"], f["file"], f["line"]) in out, "%s's frame missing:\n%s" % (name, out))
        if name.startswith("worker"):
            expect("worker pid" in out and str(record["pid"]) in out, "worker %d not named:\n%s" % (record["pid"], out))
    checks.append("hang-dump: no-NCCL words, merged stacks with the blocking frames (%.1f s)" % p.seconds)
    # Without --dir and without HANGSHIM_DIR here: the job's own directory is the one its launcher's
    # environment names (`hangshim run --dir` set it there), not /dev/shm/hangshim-$UID.
    env = dict(os.environ)
    env.pop("HANGSHIM_DIR", None)
    p = run([args.hang_dump, job.pid, "--pyframes", args.pyframes, "--hangshim", args.hangshim], env=env)
    out = p.stdout + p.stderr
    expect("ledgers in %s" % job.ledgers in out, "hang-dump without --dir did not read the job's directory:\n%s" % out)
    expect(p.returncode == 1 and "NO NCCL CALLS" in out, "hang-dump without --dir: exit %d, no no-NCCL words:\n%s" %
           (p.returncode, out))
    checks.append("hang-dump without --dir: the launcher's HANGSHIM_DIR, no-NCCL words")


def hang_case(args, work, scenario):
    records = os.path.join(work, "records")
    os.mkdir(records)
    os.mkfifo(os.path.join(records, "fifo"))
    names = ["rank0", "rank1"] + (["worker0", "worker1"] if scenario == "dataloader" else [])
    job = Job(args, work, torchrun_argv(os.path.join(HERE, "torch_job.py"), [records, scenario]))
    checks = []
    try:
        started = time.monotonic()
        found = wait_records(job, records, names)
        checks.append("job blocked as recorded after %.1f s" % (time.monotonic() - started))
        for name, record in found.items():
            expect(state(record["pid"]) is not None, "%s (pid %d) is gone" % (name, record["pid"]))
        document = check_stacks(args, job, found, checks)
        check_no_nccl(args, job, found, checks)
        check_hang_dump(args, job, found, document, checks)
    finally:
        job.kill()
    return checks


def commcheck_case(args, work):
    checks = []
    job = Job(args, work, torchrun_argv(args.comm_check, ["--backend", "gloo", "--elements", "4096", "--timeout", "60"]))
    try:
        status = job.process.wait(timeout=180)
        out = job.log_tail()
    finally:
        job.kill()
    expect(status == 0, "gpu-comm-check under torchrun: exit %d\n%s" % (status, out))
    host = socket.gethostname()
    for rank in (0, 1):
        line = re.search(r"rank %d/2 host %s device cpu: all_reduce OK \(sum 2\) barrier OK in ([0-9.]+) ms" % (
            rank, re.escape(host)), out)
        expect(line is not None, "no OK line for rank %d:\n%s" % (rank, out))
    expect("FAIL" not in out, "a FAIL line:\n%s" % out)
    checks.append("gpu-comm-check --backend gloo: exit 0, rank 0/2 and 1/2 OK (sum 2)")

    # Rank 1 never arrives: rank 0 must FAIL within --timeout (plus the watchdog's grace), not hang.
    absent = os.path.join(work, "absent.pid")
    timeout = 3
    job = Job(args, os.path.join(work, "absent"), torchrun_argv(os.path.join(HERE, "comm_check_absent.py"), [
        absent, args.comm_check, "--backend", "gloo", "--elements", "16", "--timeout", str(timeout)]))
    try:
        status = job.process.wait(timeout=180)
        out = job.log_tail()
    finally:
        job.kill()
    expect(os.path.exists(absent), "rank 1 never started:\n%s" % out)
    expect(status != 0, "torchrun exit 0 although rank 1 never arrived:\n%s" % out)
    line = re.search(r"rank 0/2 host %s device cpu: FAIL in (init_process_group|all_reduce|barrier) after ([0-9]+) ms: (.*)"
                     % re.escape(host), out)
    expect(line is not None, "no FAIL line for rank 0:\n%s" % out)
    elapsed = int(line.group(2)) / 1000.0
    expect(elapsed < timeout + 5 + 2, "rank 0 failed after %.1f s, --timeout %d s (+5 s watchdog)" % (elapsed, timeout))
    expect("rank 1/2 " not in out, "rank 1 never ran the check, yet a line names it:\n%s" % out)
    checks.append("a rank that never arrives: rank 0 FAIL in %s after %.1f s (--timeout %d): %s" % (
        line.group(1), elapsed, timeout, line.group(3)[:100]))
    return checks


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--case", required=True, choices=("uneven", "barrier", "dataloader", "commcheck"))
    for option in ("--python", "--pyframes", "--hangshim", "--shim", "--hang-dump", "--comm-check"):
        parser.add_argument(option, required=True)
    args = parser.parse_args()
    reason = skip_reason(args)
    if reason:
        print("SKIPPED: %s" % reason)
        return SKIP
    os.environ["PATH"] = os.path.dirname(args.python) + os.pathsep + os.environ.get("PATH", "")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="hangshim-torch-") as work:
        try:
            checks = commcheck_case(args, work) if args.case == "commcheck" else hang_case(args, work, args.case)
        except Failure as error:
            print("FAILED: torch/%s: %s" % (args.case, error))
            return 1
    for check in checks:
        print("ok: %s" % check)
    print("PASSED: torch/%s in %.1f s" % (args.case, time.monotonic() - started))
    return 0


if __name__ == "__main__":
    sys.exit(main())
