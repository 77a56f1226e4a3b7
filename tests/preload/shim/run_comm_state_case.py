"""Communicator state beyond plain collectives, with libhangshim.so preloaded into
comm_state_driver (see its header for the modes): memory windows are recorded as collectives,
a revoked communicator's cancelled calls are neither stuck nor failed, and a nonblocking init or
collective is in progress (neither done nor failed) until ncclCommGetAsyncError says it is done.

    run_comm_state_case.py --case NAME --shim LIB --hangshim CLI --driver EXE --fakenccl DIR

The expected facts come from what the ranks printed (their own results and choices) and from
the ledgers; the verdicts from `hangshim report --json`."""

import json
import signal
import os
import subprocess
import sys
import time

from run_shim_case import case_main, expect
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
from hung_job import run_until_reported  # noqa: E402

N = 3


def said(output):
    """{rank: [what it printed]} from the ranks' "rank R: ..." lines."""
    out = {}
    for line in output.splitlines():
        if line.startswith("rank ") and ": " in line:
            head, text = line.split(": ", 1)
            out.setdefault(int(head.split()[1]), []).append(text)
    return out


STALL_SECONDS = 1


def report_past_limit(c):
    """The report once the hang just seen is older than the job's fixed limit (a hung job's
    ledgers keep their shape; only the waits grow older)."""
    time.sleep(STALL_SECONDS + 0.5)
    return report(c)


def report(c):
    p = subprocess.run([c.args.hangshim, "report", "--json", "--no-stacks", "--exit-status", c.ledgers], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    expect(p.stdout.strip().startswith("{"), "hangshim report gave no JSON (status %d): %s" % (p.returncode, p.stderr))
    return p.returncode, json.loads(p.stdout)


def world(ledger):
    comms = [cm for cm in ledger["communicators"] if cm["key_kind"] == "unique_id"]
    expect(len(comms) == 1, "expected one communicator, got %s" % ledger["communicators"])
    return comms[0]


def run_driver(c, mode):
    code, out, err = c.run([c.args.driver, mode, str(N)], c.env())
    expect(code == 0, "%s exited %d: %s" % (mode, code, err))
    return said(out)


def every_rank_ledger(c):
    """{rank: ledger} once each of the N ranks has its ledger, else None."""
    if len(c.ledger_files()) < N:
        return None
    ledgers = c.ledgers_by_rank()
    return ledgers if sorted(ledgers) == list(range(N)) else None


def printed(c):
    """What the ranks of the job run_hung_driver runs have printed so far ({rank: [lines]})."""
    try:
        with open(os.path.join(c.dir, "job.out")) as f:
            return said(f.read())
    except FileNotFoundError:
        return {}


def run_hung_driver(c, mode, reached):
    """Runs the driver in `mode`, which hangs, until reached() (run_until_reported ends it);
    returns what the ranks printed (its stdout goes to a file: the job is killed, not ended).
    The job has a fixed 1 s stall limit: under the learned limits a wait at a call-site in its
    warm-up is in flight for 120 s, and these cases read the hang as a hang (report_past_limit)."""
    out_path = os.path.join(c.dir, "job.out")
    env = c.env(HANGSHIM_STALL_SECONDS=STALL_SECONDS)
    env["HANGSHIM_TEST_STDOUT"] = out_path
    run_until_reported(["sh", "-c", 'exec "$0" "$@" >"$HANGSHIM_TEST_STDOUT"', c.args.driver, mode, str(N)],
                       env, os.path.join(c.dir, "job.err"), reached, expect)
    with open(out_path) as f:
        return said(f.read())


def case_window(c):
    """Register, all_reduce, deregister on every rank: three collectives in that order, each
    done; the verdict is healthy."""
    saw = run_driver(c, "window")
    ledgers = c.ledgers_by_rank()
    expect(sorted(ledgers) == list(range(N)), "ledgers of ranks %s" % sorted(ledgers))
    for rank, ledger in ledgers.items():
        expect(saw[rank][-1] == "done", "rank %d did not finish: %s" % (rank, saw[rank]))
        comm = world(ledger)
        calls = [(r["nccl_op"], r["seq"]) for r in ledger["records"] if r["comm"] == comm["id"] and r["seq"] > 0]
        expect(calls == [("window_register", 1), ("all_reduce", 2), ("window_deregister", 3)],
               "rank %d: collectives %s" % (rank, calls))
        expect(comm["coll_issued"] == 3 == comm["coll_completed"], "rank %d: counters %s" % (rank, comm))
        expect(comm["op_counts"] == {"all_reduce": 1}, "rank %d: op counts %s" % (rank, comm["op_counts"]))
    status, verdict = report(c)
    expect(status == 0 and not verdict["verdict"]["problem"], "report: %s" % verdict["verdict"])


def case_window_skip(c):
    """One rank skips the (collective) registration: the others wait in window_register #1
    while it waits in all_reduce #1 — the report names both, as for any skipped collective."""
    seen = {}

    def hung():
        if len(c.ledger_files()) < N:
            return False
        ledgers = c.ledgers_by_rank()
        pending = {}
        for rank, ledger in ledgers.items():
            open_calls = [r for r in ledger["records"] if r["seq"] > 0 and not r["completed_ns"]]
            pending[rank] = [(r["nccl_op"], r["seq"]) for r in open_calls]
        if sorted(pending) != list(range(N)) or not all(pending.values()):
            return False
        seen["pending"] = pending
        seen["report"] = report(c)
        return True
    saw = run_hung_driver(c, "window_skip", hung)
    skipper = [rank for rank, lines in saw.items() if "skips window_register" in lines]
    expect(skipper == [N - 1], "the driver says %s skipped" % skipper)
    for rank, calls in seen["pending"].items():
        want = [("all_reduce", 1)] if rank in skipper else [("window_register", 1)]
        expect(calls == want, "rank %d pending %s, expected %s" % (rank, calls, want))
    status, verdict = seen["report"]
    text = json.dumps(verdict["verdict"])
    expect(status == 3 and verdict["verdict"]["problem"], "report (--exit-status %d): %s" % (status, verdict["verdict"]))
    expect("window_register" in text and "all_reduce" in text, "the verdict names neither call: %s" % text)


def case_revoke(c):
    """The ranks blocked in all_reduce #2 revoke the communicator: the call returns an error,
    and it is cancelled, not stuck and not an NCCL failure; the job ends and the report says
    so."""
    saw = run_driver(c, "revoke")
    ledgers = c.ledgers_by_rank()
    for rank, ledger in ledgers.items():
        comm = world(ledger)
        expect(comm["revoked_ns"] > 0, "rank %d: communicator not marked revoked: %s" % (rank, comm))
        expect(any(line == "revoke no error" for line in saw[rank]), "rank %d: %s" % (rank, saw[rank]))
        revokes = [r for r in ledger["records"] if r["nccl_op"] == "comm_revoke"]
        expect(len(revokes) == 1, "rank %d: revoke records %s" % (rank, revokes))
        if rank == N - 1:
            continue
        returned = [line for line in saw[rank] if line.startswith("all_reduce 2 returned ")]
        code = int(returned[0].split()[-1])
        expect(code != 0, "rank %d: the revoked all_reduce succeeded" % rank)
        second = [r for r in ledger["records"] if r["nccl_op"] == "all_reduce" and r["seq"] == 2]
        expect(second and second[0]["result"] == code and second[0]["issued_ns"] <= comm["revoked_ns"],
               "rank %d: record of all_reduce #2 %s (revoked at %d)" % (rank, second, comm["revoked_ns"]))
    status, verdict = report(c)
    expect(status == 0 and not verdict["verdict"]["problem"], "report on a revoked job: %s" % verdict["verdict"])


def returned(saw, rank, what):
    """The result the rank printed for `what` ("all_reduce 2 returned 7")."""
    lines = [line for line in saw[rank] if line.startswith(what + " returned ")]
    expect(len(lines) == 1, "rank %d printed %s" % (rank, saw[rank]))
    return int(lines[0].split()[-1])


def case_nonblocking(c):
    """config.blocking = 0: init returns ncclInProgress, the ledger's init record says so, and
    the communicator becomes active once ncclCommGetAsyncError reports success. Its
    collectives (three alone, two in a group) return ncclInProgress too: each record says it
    was in progress, and is done (result ncclSuccess) once the poll said so."""
    saw = run_driver(c, "nonblocking")
    ledgers = c.ledgers_by_rank()
    expect(sorted(ledgers) == list(range(N)), "ledgers of ranks %s" % sorted(ledgers))
    for rank, ledger in ledgers.items():
        init_code = returned(saw, rank, "init")
        comm = world(ledger)
        inits = [r for r in ledger["records"] if r["nccl_op"] == "comm_init_rank"]
        # ncclInProgress at return, settled by the poll that said ncclSuccess.
        expect(len(inits) == 1 and inits[0]["in_progress"] == (init_code == 7) and inits[0]["result"] == 0
               and inits[0]["completed_ns"] > 0, "rank %d: init returned %d; init records %s" % (rank, init_code, inits))
        expect(comm["state"] == "destroyed" and comm["coll_completed"] == 5 == comm["coll_issued"], "rank %d: %s" % (rank, comm))
        colls = [r for r in ledger["records"] if r["nccl_op"] == "all_reduce"]
        expect([r["seq"] for r in colls] == [1, 2, 3, 4, 5], "rank %d: all_reduce records %s" % (rank, colls))
        said_codes = [returned(saw, rank, "all_reduce %d" % i) for i in (1, 2, 3)] + [returned(saw, rank, "group")] * 2
        for record, code in zip(colls, said_codes):
            # What NCCL returned decides: ncclInProgress makes an in-progress record.
            expect(record["in_progress"] == (code == 7), "rank %d: returned %d, record %s" % (rank, code, record))
            expect(record["result"] == 0 and record["completed_ns"] >= record["returned_ns"] > 0,
                   "rank %d: record not done after the poll: %s" % (rank, record))
        expect(any(code == 7 for code in said_codes), "rank %d: no call returned ncclInProgress: %s" % (rank, said_codes))
    status, verdict = report(c)
    expect(status == 0 and not verdict["verdict"]["problem"], "report: %s" % verdict["verdict"])


def case_nonblocking_skip(c):
    """One rank skips all_reduce #2 on a nonblocking communicator: the others' all_reduce #2
    returned ncclInProgress and stays so while they poll — in progress, neither done nor
    failed — and the report names the missing rank at that call."""
    seen = {}

    def waiting():
        ledgers = every_rank_ledger(c)
        if ledgers is None:
            return False
        open_calls = {rank: [r for r in ledger["records"] if r["nccl_op"] == "all_reduce" and not r["completed_ns"]]
                      for rank, ledger in ledgers.items()}
        if not all(open_calls[rank] for rank in range(N - 1)):
            return False
        if any(r["seq"] < 2 for calls in open_calls.values() for r in calls):
            return False  # all_reduce #1 is still settling (in progress until every rank polled it done)
        # The shim records a call before it returns, the driver prints after: wait for the lines.
        lines = printed(c)
        if "skips all_reduce 2" not in lines.get(N - 1, []) or not all(
                any(line.startswith("all_reduce 2 returned ") for line in lines.get(rank, [])) for rank in range(N - 1)):
            return False
        seen["open"] = open_calls
        seen["ledgers"] = ledgers
        seen["report"] = report_past_limit(c)
        return True
    saw = run_hung_driver(c, "nonblocking_skip", waiting)
    expect("skips all_reduce 2" in saw[N - 1], "rank %d printed %s" % (N - 1, saw[N - 1]))
    for rank in range(N - 1):
        code = returned(saw, rank, "all_reduce 2")
        expect(code == 7, "rank %d: all_reduce 2 returned %d, not ncclInProgress" % (rank, code))
        [record] = seen["open"][rank]
        expect(record["seq"] == 2 and record["in_progress"] and record["result"] == 7,
               "rank %d: the open record %s" % (rank, record))
        comm = world(seen["ledgers"][rank])
        expect(comm["coll_completed"] == 1 and comm["async_error"] == 0, "rank %d: %s" % (rank, comm))
    expect(not seen["open"][N - 1], "rank %d has open calls %s" % (N - 1, seen["open"][N - 1]))
    status, verdict = seen["report"]
    text = json.dumps(verdict["verdict"])
    expect(status == 3 and verdict["verdict"]["problem"], "report (--exit-status %d): %s" % (status, verdict["verdict"]))
    expect("all_reduce" in text and str(N - 1) in text, "the verdict names neither the call nor rank %d: %s" % (N - 1, text))
    expect("healthy" not in text and "failed" not in verdict["verdict"].get("kind", ""), "report: %s" % text)


def case_nonblocking_absent(c):
    """A rank that never initializes: the others' nonblocking inits stay in progress — the
    communicator initializing, not failed, not active — and the report says the rank never
    joined."""
    err_path = os.path.join(c.dir, "job.err")
    seen = {}

    def waiting():
        if len(c.ledger_files()) < N - 1:
            return False
        ledgers = c.ledgers_by_rank()
        comms = [cm for ledger in ledgers.values() for cm in ledger["communicators"]]
        if len(comms) < N - 1:
            return False
        seen["comms"] = comms
        seen["report"] = report(c)
        return True
    run_until_reported([c.args.driver, "nonblocking_absent", str(N)], c.env(), err_path, waiting, expect)
    for comm in seen["comms"]:
        expect(comm["state"] == "initializing", "communicator %s" % comm)
    status, verdict = seen["report"]
    text = json.dumps(verdict)
    expect(status == 3 and verdict["verdict"]["problem"], "report (--exit-status %d): %s" % (status, verdict["verdict"]))
    expect(str(N - 1) in json.dumps(verdict["verdict"]), "the verdict does not name rank %d: %s" % (N - 1, verdict["verdict"]))
    expect("healthy" not in text, "report: %s" % verdict["verdict"])


def case_nonblocking_init_error(c):
    """Rank N-1's nonblocking init fails in the background: the call returned ncclInProgress,
    the poll says ncclSystemError. Its init record ends with that error and NCCL's text, its
    communicator is failed, and the report's verdict is init_failed for that rank — not a rank
    missing from init."""
    seen = {}

    def settled():
        ledgers = every_rank_ledger(c)
        if ledgers is None:
            return False
        states = {rank: world(ledger)["state"] for rank, ledger in ledgers.items() if ledger["communicators"]}
        if states.get(N - 1) != "failed" or any(states.get(r) != "initializing" for r in range(N - 1)):
            return False
        # The poll marks the communicator failed before the driver prints what it said.
        if not any(line.startswith("init failed: ") for line in printed(c).get(N - 1, [])):
            return False
        seen["ledgers"] = ledgers
        seen["report"] = report(c)
        return True
    saw = run_hung_driver(c, "nonblocking_init_error", settled)
    failing = N - 1
    expect(returned(saw, failing, "init") == 7, "rank %d: init did not return ncclInProgress: %s" % (failing, saw[failing]))
    state = [line for line in saw[failing] if line.startswith("async state ")]
    code = int(state[0].split()[2])
    text = [line[len("init failed: "):] for line in saw[failing] if line.startswith("init failed: ")][0]
    expect(code not in (0, 7), "rank %d: the poll said %s" % (failing, state))
    ledger = seen["ledgers"][failing]
    inits = [r for r in ledger["records"] if r["nccl_op"] == "comm_init_rank"]
    expect(len(inits) == 1 and inits[0]["result"] == code and inits[0]["result_name"] == "ncclSystemError"
           and inits[0]["in_progress"], "rank %d: init record %s" % (failing, inits))
    expect(ledger["first_error"] and ledger["first_error"]["text"] == text,
           "rank %d: first error %s, the program printed %r" % (failing, ledger["first_error"], text))
    status, verdict = seen["report"]
    expect(status == 3 and verdict["verdict"]["kind"] == "init_failed" and verdict["verdict"]["culprits"] == [failing],
           "report (--exit-status %d): %s" % (status, verdict["verdict"]))
    failures = verdict["findings"][verdict["verdict"]["finding"]]["failures"]
    expect(len(failures) == 1 and failures[0]["result"] == "ncclSystemError" and failures[0]["last_error"] == text,
           "failures %s" % failures)


def case_two_jobs(c):
    """Two hung jobs, each started with `hangshim run` into the same ledger directory: job A
    (window_skip: rank N-1 skips the window registration) and then job B (nonblocking_skip: rank
    N-1 skips all_reduce #2). The report speaks about one job at a time: by default the newest
    one running (B), listing A; --pid picks A by its launcher; with B killed the default is A;
    with both gone it is B, headed ENDED, never a current hang. Which job is which comes from
    the pids `hangshim run` ran as (it execs the driver, which forks the ranks). Both jobs run
    with a fixed 1 s stall limit, and B is read once its wait is past it: a wait at a call-site in
    its warm-up is in flight for 120 s under the learned limits (docs/report.md), and the point
    here is which job the report speaks about, with that job's hang as its verdict."""
    jobs = {}

    def start(mode):
        out = open(os.path.join(c.dir, mode + ".out"), "w")
        argv = [c.args.hangshim, "run", "--quiet", "--shim", c.args.shim, "--dir", c.ledgers, "--", c.args.driver, mode, str(N)]
        jobs[mode] = subprocess.Popen(argv, env=c.env(shim=False, HANGSHIM_STALL_SECONDS=1), stdout=out,
                                      stderr=subprocess.STDOUT, start_new_session=True)
        return jobs[mode]

    def hung(job, seq):
        # Every rank of this job has a ledger, every rank but the skipping one has collective #seq
        # open (the skipping rank may wait in another call, or outside NCCL), and no earlier one
        # is still open anywhere (a nonblocking all_reduce #1 stays in progress until every rank
        # has polled it done: a moment that looks like a hang at #1).
        mine = [c.read(path) for path in c.ledger_files()]
        mine = [ledger for ledger in mine if ledger["process"]["ppid"] == job.pid]
        if len(mine) < N:
            return False
        open_seqs = {ledger["process"]["rank"]: [r["seq"] for r in ledger["records"] if r["seq"] > 0 and not r["completed_ns"]]
                     for ledger in mine}
        if any(s < seq for seqs in open_seqs.values() for s in seqs):
            return False
        return all(seq in open_seqs.get(rank, []) for rank in range(N - 1))

    def wait_hung(job, seq):
        deadline = time.monotonic() + 120
        while not hung(job, seq):
            expect(job.poll() is None, "job %d ended (status %s) before it hung" % (job.pid, job.returncode))
            expect(time.monotonic() < deadline, "job %d did not hang within 120 s" % job.pid)
            time.sleep(0.1)

    def report_json(*options):
        p = subprocess.run([c.args.hangshim, "report", "--json", "--no-stacks"] + list(options) + [c.ledgers],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        expect(p.stdout.strip().startswith("{"), "report %s gave no JSON (status %d): %s" % (options, p.returncode, p.stderr))
        return json.loads(p.stdout)

    def is_job(doc_job, job):
        return doc_job["key"].startswith("launcher:") and (":%d:" % job.pid) in doc_job["key"]

    def kill(job):
        # Every process of the job gone, not only its launcher: the ranks (the driver's children,
        # reaped by init once it died) exist a moment after SIGKILL, and the report counts a rank
        # whose process exists as running (it picked the killed job B as the newest running one).
        os.killpg(job.pid, signal.SIGKILL)
        job.wait()
        deadline = time.monotonic() + 60
        while True:
            try:
                os.killpg(job.pid, 0)
            except ProcessLookupError:
                return
            expect(time.monotonic() < deadline, "job %d: processes of its group still exist 60 s after SIGKILL" % job.pid)
            time.sleep(0.05)

    try:
        a = start("window_skip")
        wait_hung(a, 1)  # window_register
        b = start("nonblocking_skip")
        wait_hung(b, 2)  # all_reduce #2
        time.sleep(1.5)  # past the 1 s limit: a hang, no longer in flight
        doc = report_json()
        expect(is_job(doc["job"], b), "default job %s, expected job B (pid %d)" % (doc["job"], b.pid))
        expect(len(doc["other_jobs"]) == 1 and is_job(doc["other_jobs"][0], a), "other jobs %s" % doc["other_jobs"])
        summary = doc["verdict"]["summary"]
        expect(doc["verdict"]["problem"] and "all_reduce" in summary and "window_register" not in summary,
               "job B's verdict: %s" % summary)
        doc = report_json("--pid", str(a.pid))
        expect(is_job(doc["job"], a) and "window_register" in doc["verdict"]["summary"],
               "--pid %d: job %s, verdict %s" % (a.pid, doc["job"], doc["verdict"]["summary"]))
        # hang-dump LAUNCHER reports on that launcher's job only (it passes the pids under it).
        hang_dump = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "scripts", "hang-dump")
        p = subprocess.run([hang_dump, str(a.pid), "--dir", c.ledgers, "--hangshim", c.args.hangshim,
                            "--pyframes", os.environ["PYFRAMES"], "--", "--no-stacks"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=120)
        section = p.stdout.split("== hangshim report ==", 1)[-1].split("== Python stacks", 1)[0]
        first = section.strip().splitlines()[0] if section.strip() else ""
        expect("window_register" in first, "hang-dump %d (exit %d) did not report job A's verdict:\n%s" % (a.pid, p.returncode, p.stdout))
        kill(b)
        doc = report_json()
        expect(is_job(doc["job"], a) and not doc["verdict"]["ended"], "with B killed: job %s" % doc["job"])
        kill(a)
        doc = report_json()
        expect(is_job(doc["job"], b), "with both gone: job %s (expected the newest, B)" % doc["job"])
        expect(doc["verdict"]["ended"] and doc["verdict"]["summary"].startswith("ENDED: ") and
               "was killed or crashed" in doc["verdict"]["summary"], "an ended job: %s" % doc["verdict"]["summary"])
    finally:
        for job in jobs.values():
            if job.poll() is None:
                kill(job)


CASES = {"window": case_window, "window_skip": case_window_skip, "revoke": case_revoke,
         "nonblocking": case_nonblocking, "nonblocking_absent": case_nonblocking_absent,
         "nonblocking_skip": case_nonblocking_skip, "nonblocking_init_error": case_nonblocking_init_error,
         "two_jobs": case_two_jobs}


if __name__ == "__main__":
    sys.exit(case_main(CASES))
