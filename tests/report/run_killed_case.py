"""Ranks killed with SIGKILL (their ledgers survive them):

  * one rank of a hung job killed, the others still running: once its heartbeat is older than
    --heartbeat-timeout, the report names it dead (kind heartbeat_lost), not the others;
  * the whole job killed after hanging (a scheduler's timeout): the ledgers alone still give
    the diagnosis the scenario states.

    run_killed_case.py --hangshim CLI --shim LIB --fakenccl DIR [--pythonpath DIR] [--python PY]
"""

import argparse
import os
import signal
import sys
import time

from report_test_lib import SCENARIOS, Failure, Workspace, common_args, expect


def main():
    p = argparse.ArgumentParser()
    common_args(p)
    args = p.parse_args()
    ws = Workspace(args)
    try:
        truth, status = ws.launch(os.path.join(SCENARIOS, "barrier_skipped.py"), 4, args.python)
        expect(status["state"] == "hung", "the job did not hang")
        pids = {r["rank"]: r["pid"] for r in status["ranks"]}
        os.killpg(pids[2], signal.SIGKILL)  # a victim, waiting in the barrier
        deadline = time.time() + 30
        verdict = None
        while time.time() < deadline:
            time.sleep(0.5)
            verdict = ws.report_json("--heartbeat-timeout", "1", ws.ledgers)["verdict"]
            if verdict["kind"] == "heartbeat_lost":
                break
        expect(verdict["kind"] == "heartbeat_lost" and verdict["culprits"] == [2],
               "one rank killed: %s" % verdict["summary"])
        code, text, _ = ws.hangshim("report", "--heartbeat-timeout", "1", ws.ledgers)
        expect(text.startswith("HANG: rank 2 ended inside barrier #3") and "dead" in text.splitlines()[0],
               "one rank killed, text: %s" % text.splitlines()[0])

        ws.cleanup(keep_files=True)  # the whole job killed at once
        time.sleep(1.5)
        report = ws.report_json("--heartbeat-timeout", "1", ws.ledgers)
        v = report["verdict"]
        # Rank 2 died first: it is still the one whose heartbeat stopped before the others'.
        expect(v["kind"] == "heartbeat_lost" and v["culprits"] == [2], "the job killed later: %s" % v["summary"])

        # A job killed all at once keeps the diagnosis its scenario states.
        ledgers = ws.subdir("all-killed")
        truth, status = ws.launch(os.path.join(SCENARIOS, "barrier_skipped.py"), 4, args.python, ledgers=ledgers)
        ws.cleanup(keep_files=True)
        time.sleep(1.5)
        v = ws.report_json("--heartbeat-timeout", "1", ledgers)["verdict"]
        expect(v["kind"] == truth["kind"] and v["culprits"] == truth["culprits"] and v["seq"] == truth["seq"],
               "all killed: %s, the truth says %s %s #%d" % (v["summary"], truth["kind"], truth["culprits"], truth["seq"]))
    except Failure as e:
        print("FAIL killed ranks: %s" % e)
        ws.cleanup(keep_files=True)
        print("(kept in %s)" % ws.dir)
        return 1
    ws.cleanup()
    print("ok killed ranks: the first to die is named; a job killed whole keeps its diagnosis")
    return 0


if __name__ == "__main__":
    sys.exit(main())
