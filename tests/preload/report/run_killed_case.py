"""Ranks killed with SIGKILL (their ledgers survive them):

  * the culprit of a hung job killed, the others still running: once its heartbeat is older
    than the others' by --heartbeat-timeout, it is named dead (kind heartbeat_lost); after the
    whole job is killed too, it is still the one that died first;
  * a victim killed (a rank waiting for the culprit): the diagnosis stays the scenario's, and
    stays so when the whole job is killed afterwards (a scheduler's timeout): the ledgers alone
    still name the culprit.

    run_killed_case.py --hangshim CLI --shim LIB --fakenccl DIR [--pythonpath DIR] [--python PY]
"""

import argparse
import os
import signal
import sys
import time

from report_test_lib import SCENARIOS, Failure, Workspace, common_args, expect


# Only a real failure reaches it: every wait below ends on the state it waits for.
DEADLINE_S = 120


def wait_for(ws, ledgers, kind, seconds=DEADLINE_S):
    """The report's verdict once it reaches `kind` (or the last one when it never does)."""
    deadline = time.time() + seconds
    while True:
        verdict = ws.report_json("--heartbeat-timeout", "1", ledgers)["verdict"]
        if verdict["kind"] == kind or time.time() > deadline:
            return verdict
        time.sleep(0.5)


def wait_heartbeat_behind(ws, ledgers, rank, seconds=DEADLINE_S):
    """Waits until the ledgers alone show `rank`'s heartbeat 2 s behind the others' latest (twice
    --heartbeat-timeout: the others' watchdogs went on beating after it died), however long a
    loaded machine takes to run their watchdogs that far."""
    deadline = time.time() + seconds
    age = None
    while True:
        ranks = ws.report_json("--heartbeat-timeout", "1", ledgers)["ranks"]
        age = ([r["heartbeat_age_ns"] for r in ranks if r["rank"] == rank] or [None])[0]
        if age is not None and age >= 2 * 10 ** 9:
            return
        expect(time.time() < deadline, "the other ranks' heartbeats never moved 2 s past rank %d's (age %s ns)"
               % (rank, age))
        time.sleep(0.2)


def state_of(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (IOError, OSError, IndexError):
        return None  # gone


def kill_job(ws, seconds=DEADLINE_S):
    """Kills the rest of the job and waits until its ranks are gone (or zombies)."""
    pids = list(ws.pids)
    ws.cleanup(keep_files=True)
    deadline = time.time() + seconds
    while True:
        left = [pid for pid in pids if state_of(pid) not in (None, "Z")]
        if not left:
            return
        expect(time.time() < deadline, "ranks %s outlived SIGKILL" % left)
        time.sleep(0.05)


def main():
    p = argparse.ArgumentParser()
    common_args(p)
    args = p.parse_args()
    ws = Workspace(args)
    try:
        truth, status = ws.launch(os.path.join(SCENARIOS, "stuck_dataloader.py"), 4, args.python)
        culprit = truth["culprits"][0]
        pids = {r["rank"]: r["pid"] for r in status["ranks"]}
        os.killpg(pids[culprit], signal.SIGKILL)
        v = wait_for(ws, ws.ledgers, "heartbeat_lost")
        expect(v["kind"] == "heartbeat_lost" and v["culprits"] == [culprit], "culprit killed: %s" % v["summary"])
        expect(v["summary"].startswith("HANG: rank %d never issued all_reduce #3" % culprit) and "is dead" in v["summary"],
               "culprit killed, verdict line: %s" % v["summary"])
        # The report names it at once (its pid is gone while the others run); the ledgers alone
        # tell it apart only once the others' heartbeats have moved on past --heartbeat-timeout.
        wait_heartbeat_behind(ws, ws.ledgers, culprit)
        kill_job(ws)  # and now the rest of the job
        v = ws.report_json("--heartbeat-timeout", "1", ws.ledgers)["verdict"]
        expect(v["kind"] == "heartbeat_lost" and v["culprits"] == [culprit], "then the job killed: %s" % v["summary"])

        ledgers = ws.subdir("victim")
        truth, status = ws.launch(os.path.join(SCENARIOS, "barrier_skipped.py"), 4, args.python, ledgers=ledgers)
        pids = {r["rank"]: r["pid"] for r in status["ranks"]}
        victim = [r for r in pids if r not in truth["culprits"]][-1]
        os.killpg(pids[victim], signal.SIGKILL)
        wait_heartbeat_behind(ws, ledgers, victim)
        for stage in ("a victim killed", "then the job killed"):
            v = ws.report_json("--heartbeat-timeout", "1", ledgers)["verdict"]
            expect(v["kind"] == truth["kind"] and v["culprits"] == truth["culprits"] and v["seq"] == truth["seq"],
                   "%s: %s; the truth says %s %s #%d" % (stage, v["summary"], truth["kind"], truth["culprits"], truth["seq"]))
            kill_job(ws)
    except Failure as e:
        print("FAIL killed ranks: %s" % e)
        ws.cleanup(keep_files=True)
        print("(kept in %s)" % ws.dir)
        return 1
    ws.cleanup()
    print("ok killed ranks: a dead culprit is named; a dead victim changes nothing")
    return 0


if __name__ == "__main__":
    sys.exit(main())
