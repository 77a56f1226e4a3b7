"""Runs one shim test case: a program with libhangshim.so preloaded (the C++ shim_driver or a
Python program), then checks the ledgers it left through `hangshim ledger --json`.

    run_shim_case.py --case NAME --shim LIB --hangshim CLI --driver EXE --fakenccl DIR [--python PY]

Every check compares with what the program itself did (its own counts, its own output, the
interpreter's own line numbers), never with numbers written into this file.
"""

import argparse
import fcntl
import glob
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
from expect import Failure, expect  # noqa: E402,F401  (the drivers beside this one import them from here)
from hung_job import run_until_reported  # noqa: E402


class Case(object):
    def __init__(self, args):
        self.args = args
        self.dir = tempfile.mkdtemp(prefix="hangshim-case-")
        self.ledgers = os.path.join(self.dir, "ledgers")
        os.mkdir(self.ledgers, 0o700)

    def env(self, shim=True, **extra):
        env = dict(os.environ)
        env["LD_LIBRARY_PATH"] = self.args.fakenccl + os.pathsep + env.get("LD_LIBRARY_PATH", "")
        env["HANGSHIM_DIR"] = self.ledgers
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LD_PRELOAD"):
            env.pop(k, None)
        if shim:
            env["LD_PRELOAD"] = self.args.shim
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def run(self, command, env, timeout=120):
        p = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr

    def ledger_files(self):
        return sorted(glob.glob(os.path.join(self.ledgers, "*.ledger")))

    def read(self, path):
        p = subprocess.run([self.args.hangshim, "ledger", "--json", path], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True)
        expect(p.returncode == 0, "hangshim ledger %s failed: %s" % (path, p.stderr.strip()))
        return json.loads(p.stdout)

    def ledgers_by_rank(self):
        out = {}
        for path in self.ledger_files():
            ledger = self.read(path)
            out[ledger["process"]["rank"]] = ledger
        return out

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)


# struct flock on 64-bit Linux: l_type, l_whence, l_start, l_len, l_pid (and padding).
_FLOCK = "hhqqi4x"


def writer_lock_held(path):
    """Whether someone holds the lock a ledger's writer keeps while it may write to the file
    (preload/ledger/FORMAT.md, "The writer's lock"), asked as the reader asks: F_OFD_GETLK for a
    write lock on byte 0."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        probe = struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, 0, 1, 0)
        answer = fcntl.fcntl(fd, getattr(fcntl, "F_OFD_GETLK", 36), probe)
        return struct.unpack(_FLOCK, answer)[0] != fcntl.F_UNLCK
    finally:
        os.close(fd)


def comm_records(ledger, comm_id, ops=None):
    return [r for r in ledger["records"] if r["comm"] == comm_id and (ops is None or r["nccl_op"] in ops)]


COLLECTIVES = {"all_reduce", "broadcast", "reduce", "all_gather", "reduce_scatter", "all_to_all", "gather", "scatter"}


def case_results(c):
    """Identical results with and without the shim (and with it disabled); the ledgers count
    exactly the calls the program made."""
    n = 3
    code, plain, err = c.run([c.args.driver, "results", str(n)], c.env(shim=False))
    expect(code == 0, "the program fails without the shim: %s" % err)
    expect(not c.ledger_files(), "ledgers appeared without the shim")
    code, shimmed, err = c.run([c.args.driver, "results", str(n)], c.env())
    expect(code == 0, "the program fails with the shim: %s" % err)
    expect(sorted(plain.splitlines()) == sorted(shimmed.splitlines()),
           "results differ with the shim:\n%s\nvs\n%s" % (plain, shimmed))
    expect("hangshim" not in err, "the shim printed something: %s" % err)
    ledgers = c.ledgers_by_rank()
    expect(sorted(ledgers) == list(range(n)), "one ledger per rank expected, got ranks %s" % sorted(ledgers))
    for rank, ledger in ledgers.items():
        expect(ledger["process"]["world_size"] == n, "rank %d: world size" % rank)
        expect(ledger["process"]["state"] == "exited", "rank %d: state %s" % (rank, ledger["process"]["state"]))
        comms = ledger["communicators"]
        expect(len(comms) == 2, "rank %d: %d communicators" % (rank, len(comms)))
        world, half = comms
        expect(world["key_kind"] == "unique_id" and half["key_kind"] == "split", "rank %d: key kinds" % rank)
        expect(half["parent_key"] == world["key"], "rank %d: split parent" % rank)
        expect(world["rank"] == rank and world["nranks"] == n, "rank %d: world rank/size" % rank)
        expect(world["coll_issued"] == len(COLLECTIVES) == world["coll_completed"], "rank %d: world counters" % rank)
        expect(world["p2p_issued"] == 2 == world["p2p_completed"], "rank %d: p2p counters" % rank)
        expect(all(world["op_counts"].get(op) == 1 for op in COLLECTIVES), "rank %d: op counts %s" % (rank, world["op_counts"]))
        expect(half["coll_issued"] == 1 and half["nranks"] == len(range(rank % 2, n, 2)), "rank %d: split comm" % rank)
        expect(world["state"] == "destroyed" and half["state"] == "destroyed", "rank %d: destroyed" % rank)
        seqs = [r["seq"] for r in comm_records(ledger, world["id"], COLLECTIVES)]
        expect(seqs == list(range(1, len(COLLECTIVES) + 1)), "rank %d: sequence %s" % (rank, seqs))
        grouped = comm_records(ledger, world["id"], {"send", "recv"})
        expect(len(grouped) == 2 and all(r["in_group"] for r in grouped), "rank %d: grouped p2p" % rank)
        expect(all(r["completed_ns"] >= r["issued_ns"] > 0 for r in ledger["records"]), "rank %d: times" % rank)
    # Same keys on every rank: the world everywhere, the split per color.
    keys = {ledgers[r]["communicators"][0]["key"] for r in ledgers}
    expect(len(keys) == 1, "world keys differ across ranks: %s" % keys)
    for color in (0, 1):
        keys = {ledgers[r]["communicators"][1]["key"] for r in ledgers if r % 2 == color}
        expect(len(keys) == 1, "split keys of color %d differ: %s" % (color, keys))
    expect(ledgers[0]["communicators"][1]["key"] != ledgers[1]["communicators"][1]["key"], "colors share a key")

    shutil.rmtree(c.ledgers)
    os.mkdir(c.ledgers, 0o700)
    code, disabled, err = c.run([c.args.driver, "results", str(n)], c.env(HANGSHIM_DISABLE=1))
    expect(code == 0 and sorted(disabled.splitlines()) == sorted(plain.splitlines()), "HANGSHIM_DISABLE=1 changed results")
    expect(not c.ledger_files(), "HANGSHIM_DISABLE=1 still wrote ledgers")


def case_bad_dir(c):
    """An unusable HANGSHIM_DIR: one warning per process, recording off, results unchanged."""
    n = 2
    code, plain, _ = c.run([c.args.driver, "results", str(n)], c.env(shim=False))
    blocker = os.path.join(c.dir, "not-a-directory")
    open(blocker, "w").close()
    for bad in (os.path.join(blocker, "sub"), "/proc/hangshim-cannot-exist", "relative/dir"):
        code, out, err = c.run([c.args.driver, "results", str(n)], c.env(HANGSHIM_DIR=bad))
        expect(code == 0, "the job failed with HANGSHIM_DIR=%s: %s" % (bad, err))
        expect(sorted(out.splitlines()) == sorted(plain.splitlines()), "results changed with HANGSHIM_DIR=%s" % bad)
        warnings = [line for line in err.splitlines() if line.startswith("hangshim:")]
        expect(len(warnings) == n and all("recording off" in w for w in warnings),
               "expected one warning per rank for HANGSHIM_DIR=%s, got %s" % (bad, warnings))
    # A directory others can write to is refused the same way.
    shared = os.path.join(c.dir, "shared")
    os.mkdir(shared)
    os.chmod(shared, 0o777)
    code, out, err = c.run([c.args.driver, "results", str(n)], c.env(HANGSHIM_DIR=shared))
    expect(code == 0 and "writable by other users" in err, "a world-writable HANGSHIM_DIR was accepted: %s" % err)
    expect(not glob.glob(os.path.join(shared, "*")), "ledgers written into a world-writable directory")


def case_threads(c):
    """Threads issuing collectives concurrently, each on its own communicator."""
    n, threads, calls = 2, 4, 300
    code, _, err = c.run([c.args.driver, "threads", str(n), str(threads), str(calls)], c.env(HANGSHIM_RING=4096))
    expect(code == 0, "threads program failed: %s" % err)
    for rank, ledger in c.ledgers_by_rank().items():
        comms = ledger["communicators"]
        expect(len(comms) == threads, "rank %d: %d communicators" % (rank, len(comms)))
        broadcasts = len([i for i in range(calls) if i % 5 == 4])
        for comm in comms:
            expect(comm["coll_issued"] == calls == comm["coll_completed"], "rank %d comm %d: counters %s" % (rank, comm["id"], comm))
            expect(comm["op_counts"] == {"all_reduce": calls - broadcasts, "broadcast": broadcasts},
                   "rank %d: op counts %s" % (rank, comm["op_counts"]))
            seqs = [r["seq"] for r in comm_records(ledger, comm["id"], COLLECTIVES)]
            expect(seqs == list(range(1, calls + 1)), "rank %d comm %d: sequence not 1..%d" % (rank, comm["id"], calls))
            tids = {r["thread"] for r in comm_records(ledger, comm["id"], COLLECTIVES)}
            expect(len(tids) == 1, "rank %d comm %d: issued from %d threads" % (rank, comm["id"], len(tids)))
        indices = [r["index"] for r in ledger["records"]]
        expect(indices == sorted(set(indices)), "rank %d: record indices repeat or are out of order" % rank)
        expect(not ledger["warnings"], "rank %d: %s" % (rank, ledger["warnings"]))


def case_fork(c):
    """A fork child gets its own ledger and no inherited thread; the parent's is untouched."""
    code, out, err = c.run([c.args.driver, "fork"], c.env())
    expect(code == 0, "fork program failed: %s %s" % (out, err))
    child_pid = int(out.split()[1])
    ledgers = [c.read(p) for p in c.ledger_files()]
    expect(len(ledgers) == 2, "expected the parent's and the child's ledger, got %d" % len(ledgers))
    by_pid = {l["process"]["pid"]: l for l in ledgers}
    child = by_pid.pop(child_pid)
    parent = list(by_pid.values())[0]
    expect(child["process"]["ppid"] == parent["process"]["pid"], "the child's ledger names another parent")
    expect([cm["coll_issued"] for cm in parent["communicators"]] == [20], "parent counters %s" % parent["communicators"])
    expect([cm["coll_issued"] for cm in child["communicators"]] == [5], "child counters %s" % child["communicators"])
    expect(len(parent["records"]) == 22 and len(child["records"]) == 7, "record counts %d/%d" %
           (len(parent["records"]), len(child["records"])))


def case_async(c):
    """Collectives on a (stand-in) CUDA stream complete through events the watchdog polls."""
    n, calls = 2, 20
    code, _, err = c.run([c.args.driver, "async", str(n), str(calls)], c.env(HANGSHIM_POLL_MS=10))
    expect(code == 0, "async program failed: %s" % err)
    for rank, ledger in c.ledgers_by_rank().items():
        expect("cuda-completion" in ledger["process"]["features"], "rank %d: no CUDA completion" % rank)
        comm = ledger["communicators"][0]
        expect(comm["coll_issued"] == calls == comm["coll_completed"], "rank %d: counters %s" % (rank, comm))
        coll = comm_records(ledger, comm["id"], COLLECTIVES)
        expect(all(r["event_tracked"] for r in coll), "rank %d: not all tracked by events" % rank)
        expect(all(r["completed_ns"] >= r["returned_ns"] > 0 for r in coll), "rank %d: completion before return" % rank)


def case_stall(c, late_rank=None):
    """A rank that skips a collective: the others' watchdogs report the stall once, mark the
    ledger, dump stacks; the job itself is not changed. With late_rank, that rank calls
    ncclCommInitRank only once the others have reported waiting for it there (a rank descheduled
    on a busy machine, made certain): each of them then reports that init too, which completes,
    and the stall after it is still reported and recorded as the hung call."""
    n = 2
    # No stand-in timeout: the waiting rank waits as a real hang would, and the job runs until
    # the ledgers and stderr show the stall (a deadline only a missing report reaches); then it
    # is ended. Nothing here depends on how soon the watchdog gets the CPU.
    err_path = os.path.join(c.dir, "stall.err")
    go_file = os.path.join(c.dir, "late-rank-go")
    argv = [c.args.driver, "stall", str(n)] + ([str(late_rank), go_file] if late_rank is not None else [])
    waiting = [rank for rank in range(n) if rank != late_rank]
    init_stall = "stalled: inside comm_init_rank"  # a waiting rank's report of the late rank's init

    def rank_lines(text, rank):
        return [line for line in text.splitlines() if line.startswith("hangshim: rank %d " % rank)]

    # Only the report of the skipped call counts: with a 1 s limit, a rank late to init or the
    # first all_reduce on a loaded machine makes the others report that call too (and go on).
    def stalled():
        with open(err_path) as f:
            text = f.read()
        if late_rank is not None and not os.path.exists(go_file):
            if all(any(init_stall in line for line in rank_lines(text, rank)) for rank in waiting):
                open(go_file, "w").close()  # every other rank has said it waits: the late rank comes
            return False
        reported = [line for line in text.splitlines() if line.startswith("hangshim: rank ") and "all_reduce #2" in line]
        if len(reported) < n - 1 or len(c.ledger_files()) < n:
            return False
        ledgers = c.ledgers_by_rank()
        return all(ledgers.get(rank, {}).get("process", {}).get("stacks_file") for rank in range(n - 1))
    err = run_until_reported(argv, c.env(HANGSHIM_STALL_SECONDS=1, HANGSHIM_POLL_MS=20), err_path, stalled, expect)
    lines = [line for line in err.splitlines() if line.startswith("hangshim:")]
    ledgers = c.ledgers_by_rank()
    for rank in range(n - 1):
        mine = rank_lines(err, rank)
        skipped = [line for line in mine if "all_reduce #2" in line]
        expect(len(skipped) == 1, "rank %d: expected one stall line for all_reduce #2, got %s" % (rank, lines))
        expect(mine[-1] == skipped[0], "rank %d: a stall line after the skipped call's: %s" % (rank, lines))
        ledger = ledgers[rank]
        path = os.path.join(c.ledgers, os.path.basename(ledger["ledger"]))
        for token in ("stalled", path, "hangshim report " + c.ledgers):
            expect(token in skipped[0], "rank %d: %r missing from %r" % (rank, token, skipped[0]))
        p = ledger["process"]
        expect(p["stall_count"] == len(mine), "rank %d: stall count %d, %d stall lines" % (rank, p["stall_count"], len(mine)))
        stalled = [r for r in ledger["records"] if r["index"] == p["stall_record"]]
        expect(stalled and stalled[0]["op"] == "all_reduce" and stalled[0]["seq"] == 2, "rank %d: stall record" % rank)
        stacks = os.path.join(c.ledgers, p["stacks_file"])
        expect(p["stacks_file"] and os.path.exists(stacks), "rank %d: no stacks file" % rank)
        expect(oct(os.stat(stacks).st_mode & 0o777) == "0o600", "rank %d: stacks file mode" % rank)
    # The idle rank never issues all_reduce #2. It may have waited past the limit for a late
    # peer in init or all_reduce #1 (those completed); it must not report the call it skipped.
    idle = rank_lines(err, n - 1)
    expect(not [line for line in idle if "all_reduce #2" in line], "the idle rank reported the call it skipped: %s" % idle)
    idle_process = ledgers[n - 1]["process"]
    expect(idle_process["stall_count"] == len(idle), "the idle rank's ledger counts %d stalls, %d stall lines" %
           (idle_process["stall_count"], len(idle)))
    expect(not [r for r in ledgers[n - 1]["records"] if r["op"] == "all_reduce" and r["seq"] == 2],
           "the idle rank's ledger shows all_reduce #2")
    # Each rank that waited for the late one reported its init, first, and its ledger shows that
    # init completed after waiting the limit or more; the late rank reported no init.
    if late_rank is None:
        return
    late = [line for line in rank_lines(err, late_rank) if init_stall in line]
    expect(not late, "rank %d waited for nobody, yet reported its init: %s" % (late_rank, late))
    for rank in waiting:
        mine = rank_lines(err, rank)
        inits = [line for line in mine if init_stall in line]
        expect(len(inits) == 1 and mine[0] == inits[0], "rank %d: expected its init reported first, once: %s" % (rank, mine))
        init = [r for r in ledgers[rank]["records"] if r["op"] == "comm_init_rank"]
        expect(len(init) == 1 and init[0]["completed_ns"] - init[0]["issued_ns"] >= 1000000000,
               "rank %d: the ledger's init did not wait the limit: %s" % (rank, init))


def case_killed(c):
    """SIGKILL in the middle of a collective: the ledger stays readable and shows it."""
    n = 2
    env = c.env(HANGSHIM_POLL_MS=20)
    p = subprocess.Popen([c.args.driver, "stall", str(n)], env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.time() + 90  # only a rank that never gets there reaches it
        in_call = None
        while time.time() < deadline and in_call is None:
            time.sleep(0.1)
            for path in c.ledger_files():
                ledger = c.read(path)
                pending = [r for r in ledger["records"] if r["op"] == "all_reduce" and r["seq"] == 2 and r["returned_ns"] == 0]
                if ledger["process"]["rank"] == 0 and pending:
                    in_call = path
        expect(in_call is not None, "rank 0 never got into the second all_reduce")
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    time.sleep(0.2)
    ledger = c.read(in_call)
    expect(ledger["process"]["state"] == "running", "a killed rank's ledger says %s" % ledger["process"]["state"])
    pending = [r for r in ledger["records"] if r["completed_ns"] == 0]
    expect(len(pending) == 1 and pending[0]["seq"] == 2 and pending[0]["returned_ns"] == 0,
           "expected the second all_reduce in the call, got %s" % pending)
    expect(not ledger["warnings"], "warnings after SIGKILL: %s" % ledger["warnings"])


def case_signals(c):
    code, out, err = c.run([c.args.driver, "signals", "3000"], c.env(HANGSHIM_POLL_MS=1))
    expect(code == 0, "signal storm: %s %s" % (out, err))


def case_exec(c):
    """exec: the new image is unaffected; its ledger (same pid) replaces the old image's."""
    code, _, err = c.run([c.args.driver, "exec"], c.env())
    expect(code == 0, "exec program failed: %s" % err)
    files = c.ledger_files()
    expect(len(files) == 1, "expected one ledger for the one pid, got %s" % files)
    ledger = c.read(files[0])
    expect([cm["coll_issued"] for cm in ledger["communicators"]] == [2], "ledger is not the new image's")


def case_init_all(c):
    """One process driving two devices (ncclCommInitAll): two communicators sharing one key;
    and a communicator's configured name."""
    code, _, err = c.run([c.args.driver, "init_all"], c.env())
    expect(code == 0, "init_all program failed: %s" % err)
    files = c.ledger_files()
    expect(len(files) == 1, "expected one ledger, got %s" % files)
    ledger = c.read(files[0])
    both = [cm for cm in ledger["communicators"] if cm["key_kind"] == "init_all"]
    expect(len(both) == 2, "init_all communicators: %s" % ledger["communicators"])
    expect(both[0]["key"] == both[1]["key"], "init_all communicators have different keys")
    expect([(cm["rank"], cm["nranks"], cm["device"]) for cm in both] == [(0, 2, 0), (1, 2, 1)], "ranks/devices %s" % both)
    expect(all(cm["coll_issued"] == 1 == cm["coll_completed"] for cm in both), "init_all counters %s" % both)
    grouped = [r for r in ledger["records"] if r["nccl_op"] == "all_reduce" and r["in_group"]]
    expect(len(grouped) == 2 and grouped[0]["group"] == grouped[1]["group"] != 0, "the grouped pair %s" % grouped)
    named = [cm for cm in ledger["communicators"] if cm["name"] == "trainer-dp"]
    expect(len(named) == 1 and named[0]["coll_issued"] == 1, "the named communicator: %s" % ledger["communicators"])


def case_nested(c):
    """NCCL calling its own API through its PLT (ncclBcast forwards to ncclBroadcast, as the
    real library does) leaves one record per call the program made: the inner call is
    forwarded without a record, so sequence numbers and op counts are the program's own."""
    n = 2
    code, plain, err = c.run([c.args.driver, "bcast", str(n)], c.env(shim=False))
    expect(code == 0, "the program fails without the shim: %s" % err)
    code, shimmed, err = c.run([c.args.driver, "bcast", str(n)], c.env())
    expect(code == 0, "the program fails with the shim: %s" % err)
    expect(sorted(plain.splitlines()) == sorted(shimmed.splitlines()), "results differ with the shim")
    ledgers = c.ledgers_by_rank()
    expect(sorted(ledgers) == list(range(n)), "one ledger per rank expected, got ranks %s" % sorted(ledgers))
    for rank, ledger in ledgers.items():
        world = ledger["communicators"][0]
        calls = [(r["nccl_op"], r["seq"]) for r in comm_records(ledger, world["id"], COLLECTIVES)]
        expect(calls == [("broadcast", 1), ("all_reduce", 2)], "rank %d: records %s (the program made one "
               "ncclBcast and one ncclAllReduce)" % (rank, calls))
        expect(world["coll_issued"] == 2 == world["coll_completed"], "rank %d: counters %s/%s" %
               (rank, world["coll_issued"], world["coll_completed"]))
        expect(world["op_counts"].get("broadcast") == 1, "rank %d: op counts %s" % (rank, world["op_counts"]))


def case_simulate(c):
    """A group closed by ncclGroupSimulateEnd (rank 0 alone: it is a local call) runs nothing:
    its calls are marked simulated and give their sequence numbers back, the group is closed
    (later calls are not 'in a group' that never ends), nothing stays pending, and the report
    sees no hang. Every rank's one real all_reduce is number 1, as the ranks that did not
    simulate count it."""
    n = 3
    code, plain, err = c.run([c.args.driver, "simulate", str(n)], c.env(shim=False))
    expect(code == 0, "the program fails without the shim: %s" % err)
    expect("rank 0 simulated estimate set" in plain, "the stand-in gave no estimate: %r" % plain)
    code, shimmed, err = c.run([c.args.driver, "simulate", str(n)], c.env(HANGSHIM_STALL_SECONDS=1))
    expect(code == 0, "the program fails with the shim: %s" % err)
    expect(sorted(plain.splitlines()) == sorted(shimmed.splitlines()), "results differ with the shim")
    expect("hangshim" not in err, "the shim printed something: %s" % err)
    ledgers = c.ledgers_by_rank()
    expect(sorted(ledgers) == list(range(n)), "one ledger per rank expected, got ranks %s" % sorted(ledgers))
    for rank, ledger in ledgers.items():
        world = ledger["communicators"][0]
        real = [r for r in comm_records(ledger, world["id"], COLLECTIVES) if not r["simulated"]]
        simulated = [r for r in comm_records(ledger, world["id"], COLLECTIVES) if r["simulated"]]
        expect([(r["nccl_op"], r["seq"], r["in_group"]) for r in real] == [("all_reduce", 1, False)],
               "rank %d: real calls %s" % (rank, real))
        expect(len(simulated) == (2 if rank == 0 else 0) and all(r["completed_ns"] for r in simulated),
               "rank %d: simulated calls %s" % (rank, simulated))
        expect(world["coll_issued"] == 1 == world["coll_completed"] and world["op_counts"].get("all_reduce") == 1,
               "rank %d: counters %s/%s %s" % (rank, world["coll_issued"], world["coll_completed"], world["op_counts"]))
        expect(not [r for r in ledger["records"] if not r["completed_ns"]], "rank %d: a call stays pending" % rank)
        expect(ledger["process"]["state"] == "exited", "rank %d: state %s" % (rank, ledger["process"]["state"]))
    p = subprocess.run([c.args.hangshim, "report", "--json", "--no-stacks", c.ledgers], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    verdict = json.loads(p.stdout)["verdict"] if p.stdout else {}
    expect(verdict.get("kind") not in (None, "hang") and not verdict.get("summary", "").startswith("HANG"),
           "report after a simulated group: exit %d, %s %s" % (p.returncode, verdict, p.stderr))


INIT_FAILED_LINE = re.compile(r"shim_driver rank (\d+): (\w+) returned (-?\d+); ncclGetLastError: (.*)$")


def case_init_failure(c):
    """One rank's ncclCommInitRank fails the way the real library fails without a usable GPU (the
    stand-in's HANGSHIM_FAKE_INIT_ERROR) while the others wait in init for it. The report's verdict
    is that failure: the rank, the call, NCCL's error name and the ncclGetLastError text the
    program itself printed; exit status 3 with --exit-status; JSON kind init_failed. The ledger
    names the error and keeps the text."""
    n, failing, error = 3, 1, "ncclUnhandledCudaError"
    others = [r for r in range(n) if r != failing]
    err_path = os.path.join(c.dir, "job.err")
    seen = {}

    def printed():
        with open(err_path) as f:
            return [m.groups() for m in map(INIT_FAILED_LINE.match, f.read().splitlines()) if m]

    def in_init(rank_ledger):
        return any(r["nccl_op"] == "comm_init_rank" and r["returned_ns"] == 0 for r in rank_ledger["records"])

    def reported():
        # The state to report on: the failing rank said what NCCL told it, and every other rank
        # is inside its ncclCommInitRank (its ledger's init record has not returned).
        if not printed():
            return False
        ledgers = c.ledgers_by_rank()
        if sorted(ledgers) != list(range(n)) or not all(in_init(ledgers[r]) for r in others):
            return False
        seen["ledgers"] = ledgers
        for form, flags in (("json", ["--json"]), ("text", [])):
            p = subprocess.run([c.args.hangshim, "report", "--exit-status", "--no-stacks"] + flags + [c.ledgers],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
            seen[form] = (p.returncode, p.stdout, p.stderr)
        return True

    run_until_reported([c.args.driver, "init_fail", str(n), str(failing), error], c.env(), err_path, reported, expect,
                       deadline_s=60)
    lines = printed()
    expect(len(lines) == 1, "expected one failed init, the program printed %s" % lines)
    rank, call, code, text = lines[0]
    rank, code = int(rank), int(code)
    expect(rank == failing and code != 0, "the program's own line: %s" % (lines[0],))

    code_json, out, err = seen["json"]
    expect(code_json == 3, "report --json --exit-status: exit %d (expected 3 for a problem): %s" % (code_json, err))
    doc = json.loads(out)
    verdict = doc["verdict"]
    expect(verdict["kind"] == "init_failed" and verdict["problem"], "verdict %s" % verdict)
    expect(verdict["culprits"] == [rank] and verdict["waiting"] == others, "verdict ranks %s" % verdict)
    failures = doc["findings"][verdict["finding"]]["failures"]
    expect(len(failures) == 1, "failure groups %s" % failures)
    f = failures[0]
    expect(f["ranks"] == [rank] and f["call"] == call and f["result_code"] == code and f["result"] == error,
           "the failure %s; the program saw %s returning %d" % (f, call, code))
    expect(f["last_error"] == text, "ncclGetLastError in the report %r, the program printed %r" % (f["last_error"], text))

    code_text, out, err = seen["text"]
    expect(code_text == 3, "report --exit-status: exit %d: %s" % (code_text, err))
    first = out.splitlines()[0] if out else ""
    for part in ("rank %d" % rank, call, error, text):
        expect(part in first, "the verdict line lacks %r: %s" % (part, first))
    expect("NCCL_DEBUG=INFO" in out and "nvidia-smi" in out, "no advice for %s in:\n%s" % (error, out))
    print("verdict: " + first)

    mine = seen["ledgers"][rank]
    init = [r for r in mine["records"] if r["nccl_op"] == "comm_init_rank"]
    expect(len(init) == 1 and init[0]["result"] == code and init[0]["result_name"] == error, "init record %s" % init)
    first_error = mine["first_error"]
    expect(first_error is not None and first_error["text"] == text and first_error["record"] == init[0]["index"],
           "the ledger's first error %s" % first_error)
    path = [f for f in c.ledger_files() if os.path.basename(f).startswith("hangshim-r%05d-" % rank)]
    expect(len(path) == 1, "rank %d's ledger among %s" % (rank, c.ledger_files()))
    p = subprocess.run([c.args.hangshim, "ledger", path[0]], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    expect("error %s" % error in p.stdout and text in p.stdout, "hangshim ledger text:\n%s" % p.stdout)


CASES = {"nested": case_nested, "init_failure": case_init_failure, "simulate": case_simulate, "results": case_results, "bad_dir": case_bad_dir, "threads": case_threads, "fork": case_fork,
         "async": case_async, "stall": case_stall, "killed": case_killed, "signals": case_signals,
         "stall_late_peer": lambda c: case_stall(c, late_rank=1), "stall_late_hanger": lambda c: case_stall(c, late_rank=0),
         "exec": case_exec, "init_all": case_init_all}


NO_NCCL_JOB = """
import os, sys, time
# A job that never calls NCCL (gloo, the CPU): a launcher process and a worker it starts, both
# under the shim; each writes its pid, then both wait.
if len(sys.argv) > 2:
    open(sys.argv[2], "w").write("%d\\n" % os.getpid())
    time.sleep(600)
import subprocess
# The worker gets a lower pid than the launcher where root may set the next pid (as after the
# pids wrapped around on a busy node): the launcher is the process whose parent has no shim,
# not the one with the lowest pid.
try:
    with open("/proc/sys/kernel/ns_last_pid", "w") as f:
        f.write("%d" % max(300, os.getpid() // 2))
except OSError:
    pass
worker = subprocess.Popen([sys.executable, __file__, sys.argv[1], sys.argv[1] + ".worker"])
open(sys.argv[1], "w").write("%d\\n" % os.getpid())
worker.wait()
"""


def case_no_nccl(c):
    """A job under `hangshim run` that never calls NCCL leaves no ledger (the shim writes one at
    the first NCCL call). `hangshim report` must say what is true — the shim is loaded in the
    job's processes and saw no NCCL call, here are their pids and the pyframes command — never
    "start it with hangshim run", and --json's kind is no_data, never healthy. The pids are the
    ones the job's processes wrote themselves."""
    script = os.path.join(c.dir, "no_nccl.py")
    with open(script, "w") as f:
        f.write(NO_NCCL_JOB)
    marker = os.path.join(c.dir, "pid")
    ledgers = os.path.join(c.ledgers, "job")  # not there yet: hangshim run makes it
    argv = [c.args.hangshim, "run", "--quiet", "--shim", c.args.shim, "--dir", ledgers, "--", sys.executable, script, marker]
    job = subprocess.Popen(argv, env=c.env(shim=False), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not (os.path.exists(marker) and os.path.exists(marker + ".worker")):
            expect(job.poll() is None and time.monotonic() < deadline, "the job did not start (status %s)" % job.poll())
            time.sleep(0.05)
        while True:  # each file is written once, in one call: wait until both hold a line
            with open(marker) as a, open(marker + ".worker") as b:
                texts = (a.read(), b.read())
            if all(t.endswith("\n") for t in texts):
                break
            expect(time.monotonic() < deadline, "the pid files stay empty")
            time.sleep(0.05)
        launcher, worker = int(texts[0]), int(texts[1])
        expect(launcher == job.pid, "hangshim run execs the job: pid %d, the job says %d" % (job.pid, launcher))
        print("launcher pid %d, worker pid %d (%s)" % (launcher, worker, "lower: the pids as after a wrap-around"
                                                       if worker < launcher else "higher: ns_last_pid not writable"))
        expect(os.path.isdir(ledgers) and (os.stat(ledgers).st_mode & 0o777) == 0o700,
               "hangshim run did not create the ledger directory it names")
        expect(not os.listdir(ledgers), "a job without NCCL calls left ledgers: %s" % os.listdir(ledgers))
        p = subprocess.run([c.args.hangshim, "report", ledgers], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        expect(p.returncode == 1, "report: exit %d" % p.returncode)
        expect("NO NCCL CALLS" in p.stderr and "pid %d" % launcher in p.stderr and "pid %d" % worker in p.stderr,
               "report does not say the shim is loaded in pids %d and %d:\n%s" % (launcher, worker, p.stderr))
        expect("pyframes --children %d" % launcher in p.stderr, "no pyframes command for the launcher:\n%s" % p.stderr)
        expect("hangshim run" not in p.stderr and "No such file" not in p.stderr, "misleading advice:\n%s" % p.stderr)
        p = subprocess.run([c.args.hangshim, "report", "--json", ledgers], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        doc = json.loads(p.stdout)
        expect(doc["verdict"]["kind"] == "no_data", "--json kind %s" % doc["verdict"]["kind"])
        expect(sorted(x["pid"] for x in doc["shim_processes"]) == sorted([launcher, worker]),
               "shim processes %s, the job's pids %d, %d" % (doc["shim_processes"], launcher, worker))
        # watch says the same instead of waiting for "the first NCCL call" until its timeout.
        p = subprocess.run([c.args.hangshim, "watch", "--interval", "1", "--timeout", "2", ledgers],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=60)
        expect(p.returncode == 1 and "the shim is loaded in 2 processes" in p.stdout and
               "pyframes --children %d" % launcher in p.stderr,
               "watch (exit %d):\n%s%s" % (p.returncode, p.stdout, p.stderr))
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
        job.wait()


CASES["no_nccl"] = case_no_nccl


def case_arguments(parser):
    """The options every shim case driver takes: the programs and libraries under test."""
    for option in ("--shim", "--hangshim", "--driver", "--fakenccl"):
        parser.add_argument(option, required=True)
    return parser.parse_args()


def run_case(args, body, name, passed=None):
    """Runs body(case) in a fresh Case: prints "ok PASSED" (default: name) or "FAIL NAME: why",
    keeping the ledgers of a failed case to look at; returns the exit status."""
    c = Case(args)
    try:
        body(c)
    except Failure as e:
        print("FAIL %s: %s" % (name, e))
        print("(ledgers kept in %s)" % c.ledgers)
        return 1
    c.cleanup()
    print("ok %s" % (passed or name))
    return 0


def case_main(cases):
    """The command line of a case driver: --case NAME (one of `cases`) and the programs under
    test; runs that case and returns its exit status."""
    p = argparse.ArgumentParser()
    p.add_argument("--case", required=True, choices=sorted(cases))
    args = case_arguments(p)
    return run_case(args, cases[args.case], args.case)


if __name__ == "__main__":
    sys.exit(case_main(CASES))
