"""One hang scenario (tests/system/scenarios) run with libhangshim.so preloaded and left hung; then
`hangshim report` is checked against the diagnosis the scenario states (its truth JSON):

  * --json: the verdict's kind, culprit ranks, communicator (its member ranks), collective
    number and op; for every rank its state, and the collective it waits in (communicator,
    op, number, call-site line, iteration, count, dtype, root) or the last one it completed,
    and for a rank stuck outside NCCL the line its live stack is at;
  * text: the first line names the culprits, the collective number and op, and every rank's
    line and iteration as the truth states them; a healthy run raises no alarm;
  * --exit-status: 3 for a hang, 0 for the healthy run; --rank / --comm narrow the detail, not
    the verdict;
  * several nodes: the ledgers split over two directories, one of them exported
    (`hangshim export`), give the same verdict.

    run_report_case.py --scenario FILE --ranks N --python PY --hangshim CLI --shim LIB
                       --fakenccl DIR [--pythonpath DIR]
"""

import argparse
import glob
import os
import shutil
import sys

from report_test_lib import Failure, Workspace, common_args, expect, rank_text


def same_site(site, want):
    """A report site is the truth's line (qualname may carry a class prefix)."""
    if not site:
        return False
    return (os.path.realpath(site["file"]) == os.path.realpath(want["file"]) and site["line"] == want["line"] and
            (site["function"] == want["function"] or site["function"].endswith("." + want["function"])))


def base_line(site):
    return "%s:%d" % (os.path.basename(site["file"]), site["line"])


class Checker(object):
    def __init__(self, truth, report):
        self.truth = truth
        self.report = report
        self.comms = {c["name"]: c for c in report["communicators"]}
        self.ranks = {r["rank"]: r for r in report["ranks"]}

    def group_ranks(self, name):
        """The member ranks of the scenario's group `name` ("world", "group1")."""
        if name == self.truth["communicator"]["name"]:
            return sorted(self.truth["communicator"]["ranks"])
        if name == "world":
            return list(range(self.truth["world_size"]))
        raise Failure("the truth names group %s without its ranks" % name)

    def check_call(self, rank, call, want, what):
        expect(call is not None, "rank %d: no %s in the report, the truth says %s #%d" % (rank, what, want["op"], want["seq"]))
        comm = self.comms.get(call["comm"])
        expect(comm is not None and sorted(comm["ranks"]) == self.group_ranks(want["group"]),
               "rank %d: %s on communicator %s (ranks %s), the truth says %s (ranks %s)" %
               (rank, what, call["comm"], comm and comm["ranks"], want["group"], self.group_ranks(want["group"])))
        expect(call["op"] == want["op"], "rank %d: %s is %s, the truth says %s" % (rank, what, call["op"], want["op"]))
        expect(call["seq"] == want["seq"], "rank %d: %s is #%d, the truth says #%d" % (rank, what, call["seq"], want["seq"]))
        expect(same_site(call["site"], want["callsite"]),
               "rank %d: %s at %s, the truth says %s" % (rank, what, call["site"], want["callsite"]))
        expect(call["iteration"] == want["iteration"],
               "rank %d: %s in iteration %d, the truth says %d" % (rank, what, call["iteration"], want["iteration"]))
        if "chain" in want:  # a call-site through the job's own helpers: its frames, loop line first
            got = call.get("chain", [])
            expect(len(got) == len(want["chain"]) and all(same_site(g, w) for g, w in zip(got, want["chain"])),
                   "rank %d: %s through %s, the truth says %s" % (rank, what, got, want["chain"]))
        for key in ("count", "dtype", "root"):
            if key in want:
                expect(call[key] == want[key], "rank %d: %s has %s %s, the truth says %s" % (rank, what, key, call[key], want[key]))

    def check_ranks(self):
        for rank_text_, want in self.truth["ranks"].items():
            rank = int(rank_text_)
            got = self.ranks.get(rank)
            expect(got is not None, "rank %d is missing from the report" % rank)
            state = want["state"]
            if state == "in_collective":
                expect(got["state"] == "in_collective", "rank %d: state %s, the truth says in_collective" % (rank, got["state"]))
                self.check_call(rank, got["current"], want, "the collective it waits in")
            elif state == "outside_nccl":
                expect(got["state"] == "outside_nccl", "rank %d: state %s, the truth says outside_nccl" % (rank, got["state"]))
                self.check_call(rank, got["last"], want["last_collective"], "its last collective")
                expect(same_site(got["now_at"], want["callsite"]),
                       "rank %d: its live stack is at %s, the truth says %s" % (rank, got["now_at"], want["callsite"]))
            elif state == "exited":
                expect(got["state"] == "exited", "rank %d: state %s, the truth says exited" % (rank, got["state"]))
                self.check_call(rank, got["last"], want["last_collective"], "its last collective")
            elif state == "finished":
                expect(got["state"] == "exited", "rank %d: state %s, the truth says it finished" % (rank, got["state"]))
            else:
                raise Failure("unknown truth state %s" % state)
        if not self.truth["hang"]:
            counts = {}
            for state in self.truth["ranks"].values():
                counts.update(state["collectives"])
            for name, count in counts.items():
                members = self.group_ranks(name) if name == "world" else None
                found = [c for c in self.report["communicators"]
                         if (members is None or sorted(c["ranks"]) == members) and c["issued"]["max"] == count]
                expect(found and all(c["issued"]["min"] == c["completed"]["min"] == count for c in found),
                       "communicator %s: the report's counts differ from the truth's %d collectives: %s" %
                       (name, count, self.report["communicators"]))

    def check_verdict(self, report=None, label="the report"):
        v = (report or self.report)["verdict"]
        t = self.truth
        expect(v["problem"] == t["hang"], "%s: problem=%s, the truth says hang=%s (%s)" % (label, v["problem"], t["hang"], v["summary"]))
        if not t["hang"]:
            expect(v["kind"] == "healthy", "%s: verdict %s for a healthy run: %s" % (label, v["kind"], v["summary"]))
            return
        expect(v["kind"] == t["kind"], "%s: verdict %s, the truth says %s: %s" % (label, v["kind"], t["kind"], v["summary"]))
        expect(v.get("ambiguous", False) == t.get("ambiguous", False),
               "%s: ambiguous=%s, the truth says %s: %s" % (label, v.get("ambiguous"), t.get("ambiguous", False), v["summary"]))
        expect(v["culprits"] == sorted(t["culprits"]),
               "%s: culprits %s, the truth says %s: %s" % (label, v["culprits"], t["culprits"], v["summary"]))
        expect(sorted(v["comm"]["ranks"]) == sorted(t["communicator"]["ranks"]),
               "%s: communicator %s, the truth says %s" % (label, v["comm"], t["communicator"]))
        expect(v["seq"] == t["seq"] and v["op"] == t["op"],
               "%s: %s #%d, the truth says %s #%d" % (label, v["op"], v["seq"], t["op"], t["seq"]))

    def check_text(self, text):
        first = text.splitlines()[0] if text else ""
        t = self.truth
        if not t["hang"]:
            expect(first.startswith("OK:") or first.startswith("NO HANG"), "a healthy run raised an alarm: %s" % first)
            return
        expect(first.startswith("HANG:"), "the first line is not a HANG verdict: %s" % first)
        def phrase_of(ranks):
            return ("rank %s" if len(ranks) == 1 else "ranks %s") % rank_text(ranks)
        if t.get("ambiguous"):  # both sides named, and the verdict says it cannot tell
            needed = ["cannot tell which side is wrong"] + [phrase_of(side) for side in t["sides"]]
        else:
            needed = [phrase_of(t["culprits"])]
        needed.append("%s #%d" % (t["op"], t["seq"]))
        for state in t["ranks"].values():
            if state["state"] == "in_collective":
                needed += [base_line(state["callsite"]), "iteration %d" % state["iteration"]]
                if "chain" in state:  # the loop line leads the call-site's chain
                    needed.append("%s) -> " % base_line(state["chain"][0]))
            elif state["state"] == "outside_nccl":
                needed.append(base_line(state["callsite"]))
            elif state["state"] == "exited":
                last = state["last_collective"]
                needed += [base_line(last["callsite"]), "iteration %d" % last["iteration"]]
        missing = [n for n in needed if n not in first]
        expect(not missing, "the verdict line lacks %s: %s" % (missing, first))


def split_nodes(ws, ranks):
    """The ledgers of one job as two nodes: node A a directory, node B an export."""
    node_a, node_b = ws.subdir("node-a"), ws.subdir("node-b")
    for path in glob.glob(os.path.join(ws.ledgers, "*.ledger")):
        name = os.path.basename(path)
        rank = int(name.split("-")[1][1:])
        shutil.copy(path, node_a if rank < (ranks + 1) // 2 else node_b)
    export = os.path.join(ws.dir, "node-b.json")
    code, out, err = ws.hangshim("export", node_b, "-o", export)
    expect(code == 0 and os.path.exists(export), "hangshim export failed (%d): %s" % (code, err))
    return node_a, export


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--scenario", required=True)
    p.add_argument("--ranks", type=int, required=True)
    common_args(p)
    args = p.parse_args()
    ws = Workspace(args)
    name = "%s (%d ranks, %s)" % (os.path.basename(args.scenario), args.ranks, os.path.basename(args.python))
    try:
        truth, status = ws.launch(args.scenario, args.ranks, args.python)
        expect(status["state"] == ("hung" if truth["hang"] else "exited"),
               "the job ended %s, the truth says hang=%s" % (status["state"], truth["hang"]))
        report = ws.report_json(ws.ledgers)
        checker = Checker(truth, report)
        checker.check_verdict()
        checker.check_ranks()
        code, text, err = ws.hangshim("report", "--exit-status", ws.ledgers)
        checker.check_text(text)
        expect(code == (3 if truth["hang"] else 0), "--exit-status gave %d (hang=%s)" % (code, truth["hang"]))
        expect(not err.strip(), "hangshim report printed errors: %s" % err.strip())
        # --rank / --comm choose what the detail shows; the verdict stays the job's.
        last = args.ranks - 1
        narrowed = ws.report_json("--rank", str(last), "--comm", "world", ws.ledgers)
        checker.check_verdict(narrowed, "the report with --rank %d --comm world" % last)
        expect([r["rank"] for r in narrowed["ranks"]] == [last], "--rank %d shows ranks %s" %
               (last, [r["rank"] for r in narrowed["ranks"]]))
        expect([c["name"] for c in narrowed["communicators"]] == ["world"],
               "--comm world shows %s" % [c["name"] for c in narrowed["communicators"]])
        node_a, export = split_nodes(ws, args.ranks)
        checker.check_verdict(ws.report_json(node_a, export), "the report of two nodes (a directory and an export)")
    except Failure as e:
        print("FAIL %s: %s" % (name, e))
        print("(ledgers kept in %s)" % ws.ledgers)
        ws.cleanup(keep_files=True)
        return 1
    finally:
        ws.cleanup(keep_files=True)
    shutil.rmtree(ws.dir, ignore_errors=True)
    print("ok %s: %s" % (name, report["verdict"]["summary"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
