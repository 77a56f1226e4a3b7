"""One hang scenario (tests/system/scenarios) run with libhangshim.so preloaded: the ledgers of all
ranks are compared with the diagnosis the scenario states (its truth JSON): for every rank,
the communicator, sequence number, op, count, dtype, root, Python call-site ("your line") and
iteration of the collective it hangs in — or of the last one it completed, for ranks that are
elsewhere, exited or finished — plus the stall reports of the stuck ranks.

    run_scenario_case.py --scenario FILE --python PY [--ranks N] [--stream]
                         --shim LIB --hangshim CLI --driver EXE --fakenccl DIR
"""

import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_shim_case import case_arguments, expect, run_case  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
STALL_SECONDS = 1


def same_site(frame, site):
    """The ledger frame is the truth's line (qualname may carry a class prefix)."""
    if frame is None:
        return False
    function = frame["function"]
    return (os.path.realpath(frame["file"]) == os.path.realpath(site["file"]) and frame["line"] == site["line"] and
            (function == site["function"] or function.endswith("." + site["function"])))


def your_line(ledger, record):
    site = {s["id"]: s for s in ledger["callsites"]}.get(record["callsite"])
    if site is None or not site["frames"]:
        return None
    index = site["user_frame"] if site["user_frame"] >= 0 else 0
    return site["frames"][index]


def groups_of(ledger):
    """ncclpy's group names -> comm ids: "world" is the unique-id communicator, groupN the Nth
    ncclCommSplit (None on a rank outside it)."""
    comms = {c["id"]: c for c in ledger["communicators"]}
    world = [c["id"] for c in ledger["communicators"] if c["key_kind"] == "unique_id"]
    out = {"world": world[0] if world else None}
    splits = [r for r in ledger["records"] if r["nccl_op"] == "comm_split"]
    for n, r in enumerate(splits):
        comm = comms.get(r["comm"])
        out["group%d" % (n + 1)] = r["comm"] if comm is not None and comm["key_kind"] == "split" else None
    return out


def check_collective(rank, ledger, record, want, what):
    groups = groups_of(ledger)
    expect(record["comm"] == groups.get(want["group"]), "rank %d: %s on comm %s, the truth says %s" %
           (rank, what, record["comm"], want["group"]))
    expect(record["op"] == want["op"], "rank %d: %s is %s, the truth says %s" % (rank, what, record["op"], want["op"]))
    expect(record["seq"] == want["seq"], "rank %d: %s is #%d, the truth says #%d" % (rank, what, record["seq"], want["seq"]))
    line = your_line(ledger, record)
    expect(same_site(line, want["callsite"]), "rank %d: %s from %s, the truth says %s" % (rank, what, line, want["callsite"]))
    expect(record["callsite_hit"] == want["iteration"], "rank %d: %s in iteration %d, the truth says %d" %
           (rank, what, record["callsite_hit"], want["iteration"]))
    if "count" in want:
        expect(record["count"] == want["count"], "rank %d: %s count %d vs %d" % (rank, what, record["count"], want["count"]))
    if "dtype" in want:
        expect(record["dtype"] == want["dtype"], "rank %d: %s dtype %s vs %s" % (rank, what, record["dtype"], want["dtype"]))
    if "root" in want:
        expect(record["peer"] == want["root"], "rank %d: %s root %d vs %d" % (rank, what, record["peer"], want["root"]))


def collectives(ledger):
    return [r for r in ledger["records"] if r["nccl_op"] in
            ("all_reduce", "broadcast", "reduce", "all_gather", "reduce_scatter", "all_to_all", "gather", "scatter")]


def check_rank(c, rank, ledger, want, output):
    pending = [r for r in collectives(ledger) if r["completed_ns"] == 0]
    done = [r for r in collectives(ledger) if r["completed_ns"] != 0 and r["result"] == 0]
    state = want["state"]
    if state == "in_collective":
        expect(pending, "rank %d: nothing pending, the truth says it hangs in %s #%d" % (rank, want["op"], want["seq"]))
        check_collective(rank, ledger, pending[0], want, "the pending collective")
        p = ledger["process"]
        expect(p["state"] == "stalled" and p["stall_record"] == pending[0]["index"],
               "rank %d: ledger state %s, stall record %d" % (rank, p["state"], p["stall_record"]))
        expect(p["stacks_file"] and os.path.exists(os.path.join(c.ledgers, p["stacks_file"])), "rank %d: no stacks" % rank)
        # One stall line for the hung call, the rank's last. Earlier lines are calls that
        # stalled and then completed: with a 1 s limit, a rank late to init or an earlier
        # collective on a loaded machine makes the others report that call too.
        lines = [l for l in output.splitlines() if "hangshim: rank %d " % rank in l]
        label = "%s #%d " % (want["op"], want["seq"])
        hung = [l for l in lines if label in l]
        expect(len(hung) == 1, "rank %d: expected one stall line for %s, got %s" % (rank, label.strip(), lines))
        expect(lines[-1] == hung[0], "rank %d: a stall line after the hung call's: %s" % (rank, lines))
        return
    expect(not pending, "rank %d: pending %s, the truth says %s" % (rank, pending[0]["op"] if pending else "", state))
    if state in ("outside_nccl", "exited"):
        last = want.get("last_collective")
        if last:
            expect(done, "rank %d: no completed collective" % rank)
            check_collective(rank, ledger, done[-1], last, "the last completed collective")
        if state == "exited":
            expect(ledger["process"]["state"] == "exited", "rank %d: an exited rank's ledger says %s" %
                   (rank, ledger["process"]["state"]))
    elif state == "finished":
        groups = groups_of(ledger)
        comms = {cm["id"]: cm for cm in ledger["communicators"]}
        for name, count in want["collectives"].items():
            comm = comms.get(groups.get(name))
            expect(comm is not None and comm["coll_issued"] == count == comm["coll_completed"],
                   "rank %d: %s issued %s, the truth says %d" % (rank, name, comm and comm["coll_issued"], count))
        expect(ledger["process"]["state"] == "exited", "rank %d: state %s" % (rank, ledger["process"]["state"]))


def check_healthy_stalls(ledgers, output):
    """A healthy run reports no stall but of a call that really waited past the limit: on a loaded
    machine a rank late to a collective makes the others wait there over STALL_SECONDS, and the
    watchdog rightly says so. Each stall line must name a call its rank's ledger shows completed
    at least that long after it was issued (less the watchdog's polling slack); any other is a
    false report."""
    slack_ns = 100 * 1000000
    for line in output.splitlines():
        if "stalled" not in line:
            continue
        m = re.search(r"hangshim: rank (\d+) \(.* stalled: (?:inside )?([a-z_]+)(?: #(\d+))?", line)
        expect(m is not None and int(m.group(1)) in ledgers, "a healthy run printed a stall line of no known rank: %s" % line)
        rank, op, seq = int(m.group(1)), m.group(2), m.group(3)
        calls = [r for r in ledgers[rank]["records"]
                 if op in (r["op"], r["nccl_op"]) and (seq is None or r["seq"] == int(seq))]
        waited = [r for r in calls if r["completed_ns"] != 0 and
                  r["completed_ns"] - r["issued_ns"] >= STALL_SECONDS * 1000000000 - slack_ns]
        expect(waited, "a healthy run reported a stall of a call that did not wait %d s (its records: %s): %s" %
               (STALL_SECONDS, calls, line))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--scenario", required=True)
    p.add_argument("--python", required=True)
    p.add_argument("--ranks", type=int, default=3)
    p.add_argument("--stream", action="store_true")
    # private: ncclpy loads NCCL with a plain ctypes.CDLL, reaching the shim through its dlsym
    p.add_argument("--nccl-load", choices=("global", "private"), default="global")
    args = case_arguments(p)
    name = os.path.basename(args.scenario)

    def body(c):
        truth_path = os.path.join(c.dir, "truth.json")
        launch = os.path.join(os.path.dirname(os.path.abspath(args.scenario)), "launch.py")
        extra = ["HANGSHIM_STALL_SECONDS=%d" % STALL_SECONDS, "HANGSHIM_POLL_MS=20",
                 "HANGSHIM_LIBRARY_PATHS=/ncclpy.py:/scenario_lib.py",
                 "LD_PRELOAD=" + args.shim]
        if args.stream:
            extra.append("HANGSHIM_SCENARIO_STREAM=1")
        extra.append("HANGSHIM_SCENARIO_NCCL_LOAD=" + args.nccl_load)
        command = [args.python, launch, "-n", str(args.ranks), "--timeout", "120", "--hang-after",
                   str(STALL_SECONDS + 3), "--truth", truth_path, "--workdir", os.path.join(c.dir, "work")]
        for kv in extra:
            command += ["--env", kv]
        command += ["--", args.python, args.scenario]
        env = c.env(shim=False)
        proc = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, timeout=180)
        output = proc.stdout
        expect(os.path.exists(truth_path), "the scenario wrote no truth:\n%s" % output[-3000:])
        with open(truth_path) as f:
            truth = json.load(f)
        ledgers = c.ledgers_by_rank()
        expect(sorted(ledgers) == list(range(args.ranks)), "ledgers for ranks %s:\n%s" % (sorted(ledgers), output[-3000:]))
        for rank_text, want in sorted(truth["ranks"].items(), key=lambda kv: int(kv[0])):
            check_rank(c, int(rank_text), ledgers[int(rank_text)], want, output)
        if not truth["hang"]:
            check_healthy_stalls(ledgers, output)
    return run_case(args, body, name, "%s (%d ranks%s%s)" % (name, args.ranks, ", stream" if args.stream else "",
                                                            ", NCCL by private handle" if args.nccl_load == "private" else ""))


if __name__ == "__main__":
    sys.exit(main())
