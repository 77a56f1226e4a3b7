#!/usr/bin/env python3
"""Runs one scenario through launch.py and checks that it behaves as its stated truth says.

usage: check_scenario.py --python PY --ranks N --lib-dir DIR [--mode plain|timeout]
                         [--stream] [--hang-after S] SCENARIO.py

plain: a hang scenario must hang (the launcher sees no progress while ranks still run). For
  every rank the truth describes, the evidence must agree with it:
  * in_collective: the rank is alive; its progress record says it entered the truth's
    collective (op, group, sequence number, call-site file/line/function, iteration, and
    count/dtype/root where stated) and never left it; its Python stack (faulthandler, taken
    while it hangs) holds the call-site frame, whose callee is ncclpy's function for that op;
  * outside_nccl: alive, last collective completed as stated, and the call-site and every
    listed thread site are on its stacks;
  * exited: exit code as stated, last collective as stated, traceback through the call-site.
  A healthy scenario must finish: exit 0 everywhere, every group's collective count as stated.
timeout: the same with HANGSHIM_FAKE_TIMEOUT set: ranks stated in_collective must fail with the
  stand-in's timeout error from that very collective (exit 1, record "failed"); others as above.
--stream runs every collective on a CUDA stream of the stand-in driver (asynchronous mode).
Exit 0 when everything agrees; otherwise 1 with one line per disagreement and the rank logs.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE_TIMEOUT_SECONDS = "1"

_THREAD = re.compile(r"^(Current thread|Thread) (0x[0-9a-f]+)")
_FRAME = re.compile(r'^\s+File "(.*)", line (\d+) in (.*)$')


def parse_stacks(text):
    """faulthandler's dump -> list of threads, each a list of (file, line, function), innermost
    first."""
    threads = []
    for line in (text or "").splitlines():
        if _THREAD.match(line):
            threads.append([])
            continue
        m = _FRAME.match(line)
        if m and threads:
            threads[-1].append((os.path.realpath(m.group(1)), int(m.group(2)), m.group(3)))
    return threads


def frame_of(site):
    return (os.path.realpath(site["file"]), site["line"], site["function"])


class Checker(object):
    def __init__(self, truth, status):
        self.truth = truth
        self.status = status
        self.problems = []

    def fail(self, rank, message):
        self.problems.append("rank %s: %s" % (rank, message))

    def same(self, rank, what, got, want):
        if got != want:
            self.fail(rank, "%s is %r, the truth says %r" % (what, got, want))

    def record_matches(self, rank, record, want, prefix=""):
        if record is None:
            self.fail(rank, "no progress record")
            return
        for key in ("op", "group", "seq", "iteration", "count", "dtype", "root"):
            if key in want:
                self.same(rank, prefix + key, record.get(key), want[key])
        site = want["callsite"]
        self.same(rank, prefix + "call-site", (record.get("file"), record.get("line"), record.get("function")),
                  frame_of(site))

    def stack_has(self, rank, threads, site, callee=None):
        """Whether some thread has `site` on its stack (with `callee` directly inside it)."""
        want = frame_of(site)
        for frames in threads:
            for i, frame in enumerate(frames):
                if frame == want and (callee is None or (i > 0 and frames[i - 1][2] == callee
                                                          and frames[i - 1][0].endswith("/ncclpy.py"))):
                    return True
        self.fail(rank, "no thread's stack holds %s:%d in %s%s" % (
            want[0], want[1], want[2], "" if callee is None else " calling ncclpy." + callee))
        return False

    def check_rank(self, rank, want, actual, mode):
        record = actual["progress"]
        state = want["state"]
        if state == "in_collective" and mode == "timeout":
            if actual["running"] or actual["exit_code"] != 1:
                self.fail(rank, "should have failed with the stand-in's timeout (exit 1), but %s"
                          % ("is still running" if actual["running"] else "exited %s" % actual["exit_code"]))
            self.same(rank, "record state", record and record.get("state"), "failed")
            error = (record or {}).get("error", "")
            if "timed out (HANGSHIM_FAKE_TIMEOUT=" not in error:
                self.fail(rank, "the NCCL error does not come from the stand-in's timeout: %r" % error)
            self.record_matches(rank, record, want)
        elif state == "in_collective":
            if not actual["running"]:
                self.fail(rank, "exited (%s) but should wait in %s" % (actual["exit_code"], want["op"]))
            self.same(rank, "record state", record and record.get("state"), "in")
            self.record_matches(rank, record, want)
            self.stack_has(rank, parse_stacks(actual["stacks"]), want["callsite"], callee=want["op"])
        elif state == "outside_nccl":
            if not actual["running"]:
                self.fail(rank, "exited (%s) but should be stuck outside NCCL" % actual["exit_code"])
            self.same(rank, "record state", record and record.get("state"), "out")
            self.record_matches(rank, record, want["last_collective"], "last collective's ")
            threads = parse_stacks(actual["stacks"])
            for site in [want["callsite"]] + want.get("threads", []):
                self.stack_has(rank, threads, site)
        elif state == "exited":
            self.same(rank, "exit code", actual["exit_code"], want["exit_code"])
            self.same(rank, "record state", record and record.get("state"), "out")
            self.record_matches(rank, record, want["last_collective"], "last collective's ")
            site = want["callsite"]
            needle = 'File "%s", line %d, in %s' % (site["file"], site["line"], site["function"])
            if not any(needle in line for line in actual["log_tail"]):
                self.fail(rank, "its output has no traceback through %s" % needle)
        elif state == "finished":
            self.same(rank, "exit code", actual["exit_code"], 0)
            self.same(rank, "record state", record and record.get("state"), "finished")
            self.same(rank, "collectives per group", (record or {}).get("seqs"), want["collectives"])
        else:
            self.fail(rank, "unknown state %r in the truth" % state)

    def run(self, mode):
        states = [s["state"] for s in self.truth["ranks"].values()]
        if not self.truth["hang"]:
            expected_state = "exited"
        elif mode == "timeout":
            expected_state = "hung" if "outside_nccl" in states else "exited"
        else:
            expected_state = "hung"
        self.same("all", "job state", self.status["state"], expected_state)
        self.same("all", "world size", len(self.status["ranks"]), self.truth["world_size"])
        for actual in self.status["ranks"]:
            want = self.truth["ranks"].get(str(actual["rank"]))
            if want is None:
                self.fail(actual["rank"], "the truth says nothing about this rank")
                continue
            self.check_rank(actual["rank"], want, actual, mode)
        return self.problems


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--python", required=True)
    p.add_argument("--ranks", type=int, required=True)
    p.add_argument("--lib-dir", required=True, help="directory of the stand-in libnccl.so.2")
    p.add_argument("--mode", choices=("plain", "timeout"), default="plain")
    p.add_argument("--stream", action="store_true")
    p.add_argument("--hang-after", type=float, default=1.5)
    p.add_argument("scenario")
    args = p.parse_args(argv)

    work = tempfile.mkdtemp(prefix="hangshim-scenario-")
    try:
        truth_path = os.path.join(work, "truth.json")
        status_path = os.path.join(work, "status.json")
        env = dict(os.environ)
        env["LD_LIBRARY_PATH"] = args.lib_dir + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
        command = [sys.executable, os.path.join(HERE, "launch.py"), "-n", str(args.ranks),
                   "--hang-after", str(args.hang_after), "--timeout", "100", "--dump-stacks", "--quiet",
                   "--truth", truth_path, "--status", status_path, "--workdir", os.path.join(work, "run")]
        if args.mode == "timeout":
            command += ["--env", "HANGSHIM_FAKE_TIMEOUT=" + FAKE_TIMEOUT_SECONDS]
        if args.stream:
            command += ["--env", "HANGSHIM_SCENARIO_STREAM=1"]
        command += ["--", args.python, os.path.abspath(args.scenario)]
        launcher = subprocess.call(command, env=env)
        if not os.path.exists(truth_path) or not os.path.exists(status_path):
            print("check_scenario: the run left no %s (launcher exit %d)" % (
                "truth" if not os.path.exists(truth_path) else "status", launcher))
            return 1
        with open(truth_path) as f:
            truth = json.load(f)
        with open(status_path) as f:
            status = json.load(f)
        problems = Checker(truth, status).run(args.mode)
        print("%s, %d ranks, %s%s: %s (%s); launcher exit %d after %.1fs" % (
            truth["scenario"], args.ranks, args.mode, " stream" if args.stream else "",
            truth["kind"], truth["summary"], launcher, status["elapsed"]))
        if not problems:
            return 0
        for line in problems:
            print("MISMATCH " + line)
        for r in status["ranks"]:
            print("---- rank %d (pid %d, %s) log tail:" % (
                r["rank"], r["pid"], "running" if r["running"] else "exit %s" % r["exit_code"]))
            for line in r["log_tail"]:
                print("    " + line)
            print("    progress: %s" % json.dumps(r["progress"], sort_keys=True))
            if r["stacks"]:
                print("    stacks:\n" + "\n".join("      " + s for s in r["stacks"].splitlines()))
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
