"""Stragglers on a real job of the stand-in (tests/system/scenarios/timing/straggler.py), with the shim's
default settings: `hangshim report --json` while the job runs and after it finished, compared
with the scenario's own truth.

  * one slow rank (--slow-rank R): the report names R, and only R, as the straggler at the
    gradient all_reduce (the truth's line), last at most of the collectives compared, later than
    the median rank by about the slow rank's extra time (between half and four times it),
    compared by issue times (one host); while the job runs, the line it spends the time at is
    the truth's `slow_load` line; after the job finished, the same straggler (no live stack);
    the verdict says there is no hang, with the straggler;
  * no slow rank (--slow-rank -1): no straggler, live or after (noise must not pick a rank);
  * either way the verdict is "healthy": a report on a running job that catches ranks waiting in a
    collective for the slowest one is no hang (its calls are pending far less than their limits).

    run_straggler_case.py --python PY --ranks N --slow-rank R --shim LIB --hangshim CLI --driver EXE --fakenccl DIR
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_shim_case import case_arguments, expect, run_case  # noqa: E402
from run_scenario_case import same_site  # noqa: E402
from run_learned_stall_case import timing_job  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIO = os.path.join(HERE, "..", "..", "system", "scenarios", "timing", "straggler.py")
DEADLINE = 240
LIVE_AFTER = 80  # collectives every rank completed before the live report is taken


def report(c, args):
    p = subprocess.run([args.hangshim, "report", "--json", c.ledgers], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, env=c.env(shim=False), timeout=120)
    expect(p.returncode == 0, "hangshim report failed (%d): %s" % (p.returncode, p.stderr.strip()))
    return json.loads(p.stdout)


def completed_everywhere(c, ranks):
    try:
        ledgers = c.ledgers_by_rank()
    except Exception:  # a ledger being created: look again
        return 0
    if sorted(ledgers) != list(range(ranks)):
        return 0
    done = []
    for ledger in ledgers.values():
        world = [cm for cm in ledger["communicators"] if cm["key_kind"] == "unique_id"]
        done.append(world[0]["coll_completed"] if world else 0)
    return min(done)


def check(d, truth, live, when):
    # A running job caught while ranks wait for the slowest one is no hang.
    expect(d["verdict"]["kind"] == "healthy", "%s: verdict %s" % (when, d["verdict"]["summary"]))
    stragglers = d["stragglers"]
    slow = truth["straggler"]
    if slow is None:
        expect(stragglers == [], "%s: an evenly fast job has stragglers: %s" % (when, [s["text"] for s in stragglers]))
        expect("straggler" not in d["verdict"]["summary"], "%s: verdict %s" % (when, d["verdict"]["summary"]))
        return
    expect([s["rank"] for s in stragglers] == [slow], "%s: stragglers %s, the truth says rank %d" %
           (when, [s["text"] for s in stragglers], slow))
    s = stragglers[0]
    expect(s["op"] == "all_reduce", "%s: straggler at %s" % (when, s["op"]))
    expect(same_site(s["site"], truth["grad_sync_site"]), "%s: straggler's line %s, the truth says %s" %
           (when, s["site"], truth["grad_sync_site"]))
    expect(2 * s["last"] >= s["compared"] >= 16, "%s: last at %d of %d" % (when, s["last"], s["compared"]))
    late = s["median_late_ns"] / 1e6
    expect(truth["slow_ms"] / 2 <= late <= truth["slow_ms"] * 4, "%s: %.1f ms late, the scenario adds %d ms" %
           (when, late, truth["slow_ms"]))
    expect(s["compared_by"] == "issue_times", "%s: compared by %s on one host" % (when, s["compared_by"]))
    expect(("NO HANG" in d["verdict"]["summary"] or not live) and "rank %d is the straggler" % slow in d["verdict"]["summary"],
           "%s: verdict %s" % (when, d["verdict"]["summary"]))
    if live:
        expect(s["spends_at"] is not None and same_site(s["spends_at"], truth["slow_site"]),
               "%s: spends the time at %s, the truth says %s (%s)" % (when, s["spends_at"], truth["slow_site"], s["text"]))
    print("%s: %s" % (when, s["text"]))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--python", required=True)
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--slow-rank", type=int, required=True)
    args = case_arguments(p)

    def body(c):
        command, truth_path = timing_job(c, args, SCENARIO, 60, ["HANGSHIM_SCENARIO_SLOW_RANK=%d" % args.slow_rank])
        log_path = os.path.join(c.dir, "job.log")
        with open(log_path, "w") as log:
            job = subprocess.Popen(command, env=c.env(shim=False), stdout=log, stderr=subprocess.STDOUT)
            try:
                while job.poll() is None and completed_everywhere(c, args.ranks) < LIVE_AFTER:
                    time.sleep(0.3)
                expect(job.poll() is None, "the job ended before %d collectives (exit %s):\n%s" %
                       (LIVE_AFTER, job.returncode, open(log_path).read()[-3000:]))
                live = report(c, args)
                code = job.wait(DEADLINE)
            finally:
                if job.poll() is None:
                    job.send_signal(signal.SIGTERM)
                    job.wait(60)
        output = open(log_path).read()
        expect(code == 0, "the job failed (exit %d):\n%s" % (code, output[-3000:]))
        with open(truth_path) as f:
            truth = json.load(f)
        check(live, truth, True, "while running")
        after = report(c, args)
        expect(after["verdict"]["kind"] == "healthy", "after: verdict %s" % after["verdict"]["summary"])
        check(after, truth, False, "after it finished")
    slow = "rank %d slow" % args.slow_rank if args.slow_rank >= 0 else "evenly fast"
    return run_case(args, body, "straggler", "stragglers: %d ranks, %s" % (args.ranks, slow))


if __name__ == "__main__":
    sys.exit(main())
