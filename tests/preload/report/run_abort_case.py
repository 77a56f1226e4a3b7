"""A hang ended by a watchdog (tests/system/scenarios/verdicts/watchdog_abort.py) with libhangshim.so
preloaded: the last rank never issues a collective, the others' watchdog thread aborts the world
communicator (ncclCommAbort on the NCCL stand-in) and they exit with an error. Then
`hangshim report` is checked against the scenario's own record (its truth JSON and what each
watchdog wrote when it aborted):

  * --json: verdict "aborted"; the culprit (the rank that never issued the collective), the
    communicator, the collective's number and op as the truth states them; who aborted it
    (verdict.aborted.by) and who had not reached it; the line and iteration of the aborted
    collective; how long it had been pending when the first watchdog aborted it, against the
    time the watchdogs measured; every rank's state (the aborting ranks exited after the
    previous collective, the last one is outside NCCL at its line);
  * text: the first line says ABORTED and names the aborting ranks, the collective, its line and
    iteration, and the rank that never issued it; --exit-status gives 3; the HTML page's
    verdict says the same.

    run_abort_case.py --ranks N --python PY --hangshim CLI --shim LIB --fakenccl DIR
"""

import argparse
import json
import os
import shutil
import sys

from report_test_lib import SCENARIOS, Failure, Workspace, common_args, expect, rank_text
from run_report_case import Checker, base_line, same_site

SCENARIO = os.path.join(SCENARIOS, "verdicts", "watchdog_abort.py")


def ranks_phrase(ranks):
    return ("rank %s" if len(ranks) == 1 else "ranks %s") % rank_text(ranks)


def watchdog_records(ws, truth):
    """What each aborting rank's watchdog wrote: when the collective began, when it aborted."""
    out = {}
    for rank in truth["aborted_by"]:
        path = os.path.join(ws.dir, "work.1", "watchdog.%d.json" % rank)
        expect(os.path.exists(path), "rank %d's watchdog wrote no record (%s): it never aborted" % (rank, path))
        with open(path) as f:
            out[rank] = json.load(f)
        expect(out[rank]["result"] == 0, "rank %d: ncclCommAbort returned %d" % (rank, out[rank]["result"]))
    return out


def check(ws, args):
    truth, status = ws.launch(SCENARIO, args.ranks, args.python)
    last = args.ranks - 1
    expect(status["state"] == "hung", "the job ended %s; the last rank should still wait for its batch" % status["state"])
    for r in status["ranks"]:
        want = truth["ranks"][str(r["rank"])]
        if want["state"] == "exited":
            expect(not r["running"] and r["exit_code"] == want["exit_code"],
                   "rank %d: running=%s exit %s, the truth says it exits %d after its watchdog's abort: %s" % (
                       r["rank"], r["running"], r["exit_code"], want["exit_code"], r.get("log_tail", "")[-300:]))
    watchdogs = watchdog_records(ws, truth)

    report = ws.report_json(ws.ledgers)
    checker = Checker(truth, report)
    checker.check_verdict()
    checker.check_ranks()
    v = report["verdict"]
    aborted = v.get("aborted")
    expect(aborted is not None, "the verdict has no \"aborted\" part: %s" % v)
    expect(aborted["by"] == sorted(truth["aborted_by"]),
           "aborted by %s, the truth says %s" % (aborted["by"], truth["aborted_by"]))
    expect(aborted["not_reached"] == sorted(truth["culprits"]),
           "ranks that had not reached it: %s, the truth says %s" % (aborted["not_reached"], truth["culprits"]))
    expect(aborted["comm"]["name"] == truth["communicator"]["name"], "aborted comm %s" % aborted["comm"])
    call = aborted["call"]
    expect(call is not None and same_site(call["site"], truth["callsite"]) and call["iteration"] == truth["iteration"],
           "the aborted collective is at %s, the truth says %s iteration %d" % (call, truth["callsite"], truth["iteration"]))
    # The watchdog that aborted first measured how long it waited; the ledger's figure is the
    # wait from the call's record to the abort's (a few ms apart from the watchdog's clock reads).
    first = min(watchdogs.values(), key=lambda w: w["aborted_at"])
    measured = first["aborted_at"] - first["began"]
    expect(measured >= truth["timeout"], "the watchdog aborted after %.3f s, before its timeout" % measured)
    pending = aborted["pending_ns"] / 1e9
    expect(abs(pending - measured) < 0.5,
           "the report says #%d had been pending %.3f s at the abort; the watchdog measured %.3f s" % (truth["seq"], pending, measured))

    code, text, err = ws.hangshim("report", "--exit-status", "--html", os.path.join(ws.dir, "report.html"), ws.ledgers)
    expect(code == 3, "--exit-status gave %d for an aborted job" % code)
    expect(not err.strip(), "hangshim report printed errors: %s" % err.strip())
    first_line = text.splitlines()[0] if text else ""
    needed = ["ABORTED: ", "%s aborted comm world" % ranks_phrase(truth["aborted_by"]),
              "%s #%d at %s (iteration %d)" % (truth["op"], truth["seq"], base_line(truth["callsite"]), truth["iteration"]),
              "%s never issued it" % ranks_phrase(truth["culprits"]),
              base_line(truth["ranks"][str(last)]["callsite"])]
    missing = [n for n in needed if n not in first_line]
    expect(not missing, "the verdict line lacks %s: %s" % (missing, first_line))
    with open(os.path.join(ws.dir, "report.html")) as f:
        page = f.read()
    expect("ABORTED: " in page and "class=\"problem\"" in page, "the HTML page does not show the aborted verdict")
    return v["summary"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ranks", type=int, required=True)
    common_args(p)
    args = p.parse_args()
    ws = Workspace(args)
    name = "watchdog_abort.py (%d ranks, %s)" % (args.ranks, os.path.basename(args.python))
    try:
        summary = check(ws, args)
    except Failure as e:
        print("FAIL %s: %s" % (name, e))
        print("(ledgers kept in %s)" % ws.ledgers)
        ws.cleanup(keep_files=True)
        return 1
    ws.cleanup(keep_files=True)
    shutil.rmtree(ws.dir, ignore_errors=True)
    print("ok %s: %s" % (name, summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
