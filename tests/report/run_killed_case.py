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


def wait_for(ws, ledgers, kind, seconds=30):
    """The report's verdict once it reaches `kind` (or the last one when it never does)."""
    deadline = time.time() + seconds
    while True:
        verdict = ws.report_json("--heartbeat-timeout", "1", ledgers)["verdict"]
        if verdict["kind"] == kind or time.time() > deadline:
            return verdict
        time.sleep(0.5)


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
        time.sleep(2.5)
        ws.cleanup(keep_files=True)  # and now the rest of the job
        time.sleep(1.5)
        v = ws.report_json("--heartbeat-timeout", "1", ws.ledgers)["verdict"]
        expect(v["kind"] == "heartbeat_lost" and v["culprits"] == [culprit], "then the job killed: %s" % v["summary"])

        ledgers = ws.subdir("victim")
        truth, status = ws.launch(os.path.join(SCENARIOS, "barrier_skipped.py"), 4, args.python, ledgers=ledgers)
        pids = {r["rank"]: r["pid"] for r in status["ranks"]}
        victim = [r for r in pids if r not in truth["culprits"]][-1]
        os.killpg(pids[victim], signal.SIGKILL)
        time.sleep(2.5)
        for stage in ("a victim killed", "then the job killed"):
            v = ws.report_json("--heartbeat-timeout", "1", ledgers)["verdict"]
            expect(v["kind"] == truth["kind"] and v["culprits"] == truth["culprits"] and v["seq"] == truth["seq"],
                   "%s: %s; the truth says %s %s #%d" % (stage, v["summary"], truth["kind"], truth["culprits"], truth["seq"]))
            ws.cleanup(keep_files=True)
            time.sleep(1.5)
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
