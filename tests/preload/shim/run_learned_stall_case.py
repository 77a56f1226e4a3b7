"""The shim's learned stall limits on a real job of the stand-in, with the default settings (no
HANGSHIM_STALL_SECONDS, no HANGSHIM_POLL_MS): tests/system/scenarios/timing/checkpoint_then_hang.py.

Checked against the scenario's own truth and the ledgers' own records:
  * every waiting rank declares the stall at the hang's all_reduce (its ledger's stall record is
    that record: the collective, line and iteration the truth names), exactly once, with a limit
    learned from the all_reduce's earlier waits (shorter than the new call-site allowance) and a
    stall line that says so;
  * the checkpoint barriers, where those ranks waited PAUSE seconds each time, are no stall;
  * the rank stuck in its loader (outside NCCL) declares nothing;
  * `hangshim watch --json --exit-status`, started with the job and no --stall, judges the
    ledgers with the same model: it sits through the checkpoints and ends, with the report, after
    the hang (its verdict is the truth's: the stuck rank, not rank 0 at a checkpoint).
The job ends as soon as every waiting rank has declared its stall and watch has ended (a deadline only a failure
reaches ends it otherwise). Printed, not judged: how long each rank's call was pending when
declared (the benchmark, tests/bench/stall_bench, measures time to verdict).

    run_learned_stall_case.py --python PY [--ranks N] --shim LIB --hangshim CLI --driver EXE --fakenccl DIR
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_shim_case import case_arguments, expect, run_case, writer_lock_held  # noqa: E402
from run_scenario_case import check_rank, collectives  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIO = os.path.join(HERE, "..", "..", "system", "scenarios", "timing", "checkpoint_then_hang.py")
NEW_SITE_SECONDS = 120  # StallModelSettings::new_site_seconds
DEADLINE = 240


def timing_job(c, args, scenario, hang_after, env=()):
    """The launch.py command running a tests/system/scenarios/timing program with the shim preloaded at its
    default settings (its truth in the case's directory), and the truth's path."""
    truth_path = os.path.join(c.dir, "truth.json")
    scenario = os.path.realpath(scenario)
    launch = os.path.join(os.path.dirname(os.path.dirname(scenario)), "launch.py")
    command = [args.python, launch, "-n", str(args.ranks), "--timeout", str(DEADLINE), "--hang-after", str(hang_after),
               "--truth", truth_path, "--workdir", os.path.join(c.dir, "work")]
    for kv in ("HANGSHIM_LIBRARY_PATHS=/ncclpy.py:/scenario_lib.py", "LD_PRELOAD=" + args.shim) + tuple(env):
        command += ["--env", kv]
    return command + ["--", args.python, scenario], truth_path


def stalled_ranks(c, waiting):
    try:
        ledgers = c.ledgers_by_rank()
    except Exception:  # a ledger being created: look again
        return set()
    return {r for r in waiting if r in ledgers and ledgers[r]["process"]["state"] == "stalled"}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--python", required=True)
    p.add_argument("--ranks", type=int, default=3)
    args = case_arguments(p)

    def body(c):
        command, truth_path = timing_job(c, args, SCENARIO, 120)
        log_path = os.path.join(c.dir, "job.log")
        waiting = set(range(args.ranks - 1))
        watch_out = os.path.join(c.dir, "watch.json")
        with open(log_path, "w") as log, open(watch_out, "w") as wout:
            job = subprocess.Popen(command, env=c.env(shim=False), stdout=log, stderr=subprocess.STDOUT)
            watch = subprocess.Popen([args.hangshim, "watch", c.ledgers, "--interval", "0.5", "--json", "--exit-status",
                                      "--timeout", str(DEADLINE)], env=c.env(shim=False), stdout=wout,
                                     stderr=subprocess.STDOUT)
            try:
                while job.poll() is None and (stalled_ranks(c, waiting) != waiting or watch.poll() is None):
                    time.sleep(0.5)
                # While the ranks live, each holds its ledger's writer lock: readers copy it torn-free.
                held_while_alive = {path: writer_lock_held(path) for path in c.ledger_files()} if job.poll() is None else {}
            finally:
                for p in (job, watch):
                    if p.poll() is None:
                        p.send_signal(signal.SIGTERM)  # the launcher kills the ranks' process groups
                    p.wait(60)
        with open(log_path) as f:
            output = f.read()
        expect(held_while_alive and all(held_while_alive.values()),
               "a live rank's ledger without its writer's lock: %s" % held_while_alive)
        # Once they are gone nobody holds it (the kernel ends it with the process): one read.
        gone_by = time.time() + 30
        while any(writer_lock_held(path) for path in c.ledger_files()) and time.time() < gone_by:
            time.sleep(0.2)
        expect(not any(writer_lock_held(path) for path in c.ledger_files()),
               "a ledger's writer lock outlived its process: %s" % [p for p in c.ledger_files() if writer_lock_held(p)])
        expect(os.path.exists(truth_path), "the scenario wrote no truth:\n%s" % output[-3000:])
        with open(truth_path) as f:
            truth = json.load(f)
        ledgers = c.ledgers_by_rank()
        expect(sorted(ledgers) == list(range(args.ranks)), "ledgers for ranks %s:\n%s" % (sorted(ledgers), output[-3000:]))
        expect(stalled_ranks(c, waiting) == waiting, "ranks %s never declared a stall within %d s:\n%s" %
               (sorted(waiting - stalled_ranks(c, waiting)), DEADLINE, output[-3000:]))
        with open(watch_out) as f:
            watched = f.read()
        expect(watch.returncode == 3, "watch ended with %s, not 3 (a problem found):\n%s" % (watch.returncode, watched[-3000:]))
        verdict = json.loads(watched[watched.index("\n{") + 1:])["verdict"]
        expect(verdict["kind"] == truth["kind"] and verdict["culprits"] == truth["culprits"],
               "watch's verdict: %s; the truth: %s, culprits %s" % (verdict["summary"], truth["kind"], truth["culprits"]))
        for rank_text, want in sorted(truth["ranks"].items(), key=lambda kv: int(kv[0])):
            rank = int(rank_text)
            ledger = ledgers[rank]
            process = ledger["process"]
            expect("writer-lock" in process["features"], "rank %d: features %s" % (rank, process["features"]))
            expect("learned-stall-limits" in process["features"] and process["stall_seconds"] == 0,
                   "rank %d: the default is not the learned limit: %s, %s s" % (rank, process["features"], process["stall_seconds"]))
            if want["state"] != "in_collective":
                expect(process["stall_count"] == 0, "rank %d (outside NCCL) declared %d stall(s)" % (rank, process["stall_count"]))
                check_rank(c, rank, ledger, want, output)
                continue
            # The truth's collective, line and iteration, the stall record, the stacks, one stall line.
            check_rank(c, rank, ledger, want, output)
            expect(process["stall_count"] == 1, "rank %d: %d stalls (the checkpoint barriers are none)" %
                   (rank, process["stall_count"]))
            limit = process["stall_limit_ms"] / 1000.0
            expect(0 < limit < NEW_SITE_SECONDS, "rank %d: limit %.1f s, not learned" % (rank, limit))
            line = [l for l in output.splitlines() if "hangshim: rank %d " % rank in l][0]
            expect("learned from its" in line, "rank %d: the stall line does not say the limit was learned: %s" % (rank, line))
            barriers = [r for r in collectives(ledger) if r["op"] == "barrier"]
            expect(len(barriers) == truth["checkpoints"], "rank %d: %d barriers, the truth says %d" %
                   (rank, len(barriers), truth["checkpoints"]))
            if rank != 0:  # rank 0 saves, then enters the barrier last: it does not wait there
                for b in barriers:
                    waited = (b["completed_ns"] - b["issued_ns"]) / 1e9
                    expect(waited >= 0.9 * truth["pause_seconds"], "rank %d: barrier #%d waited only %.1f s" %
                           (rank, b["seq"], waited))
            stalled = [r for r in ledger["records"] if r["index"] == process["stall_record"]][0]
            print("rank %d: declared after %.2f s pending (limit %.2f s, learned); %s" %
                  (rank, (process["stall_ns"] - stalled["issued_ns"]) / 1e9, limit, line.split("hangshim: ", 1)[1]))
    return run_case(args, body, "learned_stall", "checkpoints, then a hang at a fast call-site (%d ranks, default limits)" %
                    args.ranks)


if __name__ == "__main__":
    sys.exit(main())
