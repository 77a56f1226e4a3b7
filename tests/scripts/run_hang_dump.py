"""scripts/hang-dump against a real hung job: a hang scenario (tests/system/scenarios) runs under
launch.py (the torchrun stand-in) with libhangshim.so preloaded over the NCCL stand-in; once
`hangshim report` sees the hang, hang-dump is pointed at the still running launcher, by PID
and by --pgrep, with --out. Its output must name the scenario's truth (the JSON the scenario
writes):

  * the report's verdict line: HANG, the culprit ranks, the collective (op #seq);
  * the merged stacks: for every rank, the function and file:line the truth says it is stuck
    at, on that rank's path through the merged tree;
  * without a PID it finds the launcher, started under the name torchrun, by itself;
  * --out: a 0700 directory whose stacks.json (pyframes --json) has every rank's main thread at
    its truth line, whose export gives the truth's verdict to `hangshim report`, and whose
    report.txt starts with the verdict.

    run_hang_dump.py --scenario FILE --ranks N --python PY --script HANG_DUMP --pyframes CLI
                     --hangshim CLI --shim LIB --fakenccl DIR
"""

import argparse
import html
import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIOS = os.path.join(os.path.dirname(HERE), "system", "scenarios")

# The report tests' helpers: the scenarios' library paths and rank lists as the report writes them.
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "preload", "report"))
from report_test_lib import LIBRARY_PATHS, Failure, expect, rank_text  # noqa: E402


def parse_ranks(text):
    """ "0-2,5" -> {0, 1, 2, 5} """
    ranks = set()
    for part in text.split(","):
        low, _, high = part.partition("-")
        ranks.update(range(int(low), int(high or low) + 1))
    return ranks


def stuck_site(state):
    """Where the truth says a rank's main thread is."""
    return state["callsite"]


def oldest(pids):
    """The PID started first (field 22 of /proc/PID/stat), None for none."""
    starts = {}
    for pid in pids:
        try:
            with open("/proc/%s/stat" % pid) as f:
                starts[int(pid)] = int(f.read().rsplit(")", 1)[1].split()[19])
        except (IOError, OSError, ValueError, IndexError):
            pass
    return min(starts, key=lambda p: (starts[p], p)) if starts else None


class Job(object):
    """launch.py running the scenario; the launcher stays alive while the ranks hang."""

    def __init__(self, args, work):
        self.args = args
        self.work = work
        self.ledgers = os.path.join(work, "ledgers")
        os.mkdir(self.ledgers, 0o700)
        self.truth_path = os.path.join(work, "truth.json")
        self.workdir = os.path.join(work, "rendezvous")
        self.env = dict(os.environ)
        for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LD_PRELOAD", "HANGSHIM_DIR"):
            self.env.pop(k, None)
        self.env["LD_LIBRARY_PATH"] = args.fakenccl + os.pathsep + self.env.get("LD_LIBRARY_PATH", "")
        self.env["HANGSHIM_LIBRARY_PATHS"] = LIBRARY_PATHS
        self.env["PYTHONDONTWRITEBYTECODE"] = "1"
        # The launcher is launch.py under the name torchrun (a script whose #! names the python,
        # as pip installs torchrun), so that hang-dump's default, the oldest torchrun, finds it.
        self.torchrun = os.path.join(work, "torchrun")
        with open(self.torchrun, "w") as f:
            f.write("#!%s\nimport runpy, sys\nsys.argv[0] = %r\nrunpy.run_path(sys.argv[0], run_name='__main__')\n"
                    % (args.python, os.path.join(SCENARIOS, "launch.py")))
        os.chmod(self.torchrun, 0o755)
        command = [self.torchrun, "-n", str(args.ranks), "--timeout", "150",
                   "--hang-after", "140", "--quiet", "--truth", self.truth_path, "--workdir", self.workdir]
        for kv in ("HANGSHIM_DIR=" + self.ledgers, "HANGSHIM_POLL_MS=20", "HANGSHIM_STALL_SECONDS=2",
                   "LD_PRELOAD=" + args.shim):
            command += ["--env", kv]
        command += ["--", args.python, args.scenario]
        self.proc = subprocess.Popen(command, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def wait_for_hang(self, limit=90):
        """The truth, once the ledgers show the hang the truth states."""
        deadline = time.time() + limit
        last = ""
        while time.time() < deadline:
            expect(self.proc.poll() is None, "the launcher exited (%s) before the job hung" % self.proc.returncode)
            if os.path.exists(self.truth_path):
                with open(self.truth_path) as f:
                    truth = json.load(f)
                p = subprocess.run([self.args.hangshim, "report", "--json", self.ledgers], env=self.env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=60)
                if p.returncode == 0:
                    verdict = json.loads(p.stdout)["verdict"]
                    last = verdict["summary"]
                    if verdict["kind"] == truth["kind"]:
                        return truth
            time.sleep(0.5)
        raise Failure("no hang of the truth's kind after %ds (last verdict: %s)" % (limit, last))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)  # launch.py kills every rank's process group
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def hang_dump(job, *arguments):
    command = [job.args.script, "--pyframes", job.args.pyframes, "--hangshim", job.args.hangshim,
               "--dir", job.ledgers] + list(arguments)
    p = subprocess.run(command, env=job.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=120)
    expect(p.returncode == 0, "%s: exit %d:\n%s\n%s" % (" ".join(command), p.returncode, p.stdout, p.stderr))
    return p.stdout


def section(text, title):
    start = text.find("== " + title)
    expect(start >= 0, "hang-dump printed no '== %s' section:\n%s" % (title, text))
    end = text.find("\n== ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def check_verdict_line(report, truth):
    lines = report.splitlines()
    expect(len(lines) > 1 and lines[1].startswith("HANG:"), "the report does not start with a HANG verdict:\n%s" % report)
    culprits = truth["culprits"]
    phrase = ("rank %s" if len(culprits) == 1 else "ranks %s") % rank_text(culprits)
    for needed in (phrase, "%s #%d" % (truth["op"], truth["seq"])):
        expect(needed in lines[1], "the verdict lacks %r: %s" % (needed, lines[1]))


def rank_paths(stacks):
    """The merged tree, as {rank: the frame lines on that rank's path}. The tree starts after
    the summary, at "ranks 0-2:"; a branch "├─ ranks 1-2 (idle):" holds the lines below it up
    to the next branch at its column or left of it; lines outside any branch are every rank's."""
    lines = stacks.splitlines()
    start = next((i for i, l in enumerate(lines) if re.match(r"^ranks? [0-9,-]+:$", l)), None)
    expect(start is not None, "no merged tree in:\n%s" % stacks)
    everyone = parse_ranks(lines[start].split()[1].rstrip(":"))
    paths = {r: [] for r in everyone}
    branches = []  # (column, ranks) of the branches the current line is in
    for line in lines[start + 1:]:
        label = re.search(r"[├└]─ ranks? ([0-9,-]+)", line)
        if label:
            column = label.start()
            branches = [b for b in branches if b[0] < column] + [(column, parse_ranks(label.group(1)))]
            continue
        for r in everyone:
            if all(r in ranks for _, ranks in branches):
                paths[r].append(line)
    return paths


def check_merged_stacks(stacks, truth):
    """Each rank's truth line, "function (file:line)", is on that rank's path in the tree."""
    paths = rank_paths(stacks)
    for rank_, state in truth["ranks"].items():
        rank, site = int(rank_), stuck_site(state)
        where = "%s (%s:%d)" % (site["function"], site["file"], site["line"])
        expect(any(where in l for l in paths.get(rank, [])),
               "rank %d: its path in the merged stacks does not pass %s:\n%s" % (rank, where, stacks))


def check_saved(job, out, truth):
    expect(stat.S_IMODE(os.stat(out).st_mode) == 0o700, "--out %s is not 0700" % out)
    with open(os.path.join(out, "stacks.json")) as f:
        processes = json.load(f)["processes"]
    by_rank = {int(p["rank"]): p for p in processes if p.get("rank", "") != ""}
    for rank_, state in truth["ranks"].items():
        site = stuck_site(state)
        process = by_rank.get(int(rank_))
        expect(process is not None, "stacks.json has no process of rank %s" % rank_)
        main = process["threads"][0]["frames"]
        expect(any(fr["function"] == site["function"] and fr["line"] == site["line"] and
                   os.path.realpath(fr["file"]) == os.path.realpath(site["file"]) for fr in main),
               "stacks.json: rank %s's main thread is not at %s: %s" % (rank_, site, main))
    export = os.path.join(out, socket.gethostname() + ".json")
    p = subprocess.run([job.args.hangshim, "report", "--json", export], env=job.env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, timeout=60)
    expect(p.returncode == 0, "hangshim report of the saved export: exit %d: %s" % (p.returncode, p.stderr))
    verdict = json.loads(p.stdout)["verdict"]
    expect(verdict["kind"] == truth["kind"] and verdict["culprits"] == sorted(truth["culprits"]),
           "the saved export gives %s %s, the truth says %s %s" % (verdict["kind"], verdict["culprits"], truth["kind"],
                                                                 truth["culprits"]))
    with open(os.path.join(out, "report.txt")) as f:
        first = f.readline()
    expect(first.startswith("HANG:"), "report.txt does not start with the verdict: %s" % first)
    # The page holds the same verdict (tests/preload/report/run_html_case.py checks it in a browser).
    with open(os.path.join(out, "report.html"), encoding="utf-8") as f:
        page = f.read()
    verdict = re.search(r'<div id="verdict"[^>]*>(.*?)</div>', page, re.S)
    expect(verdict is not None and html.unescape(verdict.group(1)) == first.strip(),
           "report.html's verdict is %r, report.txt's %r" % (verdict and verdict.group(1), first.strip()))


def main():
    p = argparse.ArgumentParser()
    for name in ("--scenario", "--python", "--script", "--pyframes", "--hangshim", "--shim", "--fakenccl"):
        p.add_argument(name, required=True)
    p.add_argument("--ranks", type=int, required=True)
    args = p.parse_args()
    name = "%s (%d ranks, %s)" % (os.path.basename(args.scenario), args.ranks, args.python)
    work = tempfile.mkdtemp(prefix="hangshim-hang-dump-")
    job = None
    try:
        job = Job(args, work)
        truth = job.wait_for_hang()
        out = os.path.join(work, "sent")
        text = hang_dump(job, str(job.proc.pid), "--out", out)
        expect(text.startswith("hang-dump: launcher %d " % job.proc.pid), "hang-dump names another launcher:\n%s" % text)
        check_verdict_line(section(text, "hangshim report"), truth)
        check_merged_stacks(section(text, "Python stacks"), truth)
        check_saved(job, out, truth)
        # --pgrep: the workdir is in the launcher's command line only (and in hang-dump's own,
        # which it must leave out).
        text = hang_dump(job, "--pgrep", job.workdir)
        expect(text.startswith("hang-dump: launcher %d " % job.proc.pid),
               "--pgrep %s found another launcher than %d:\n%s" % (job.workdir, job.proc.pid, text[:300]))
        check_merged_stacks(section(text, "Python stacks"), truth)
        # No launcher given: the oldest torchrun, checked when ours is the oldest one here.
        others = subprocess.run(["pgrep", "-x", "torchrun"], stdout=subprocess.PIPE, universal_newlines=True)
        if oldest(others.stdout.split()) == job.proc.pid:
            text = hang_dump(job)
            expect(text.startswith("hang-dump: launcher %d " % job.proc.pid),
                   "hang-dump without a PID found another launcher than torchrun %d:\n%s" % (job.proc.pid, text[:300]))
            check_merged_stacks(section(text, "Python stacks"), truth)
        else:
            print("note: an older torchrun runs here (%s): the default launcher is not checked" %
                  " ".join(others.stdout.split()))
    except (Failure, subprocess.TimeoutExpired) as e:
        print("FAIL %s: %s" % (name, e))
        return 1
    finally:
        if job is not None:
            job.stop()
        shutil.rmtree(work, ignore_errors=True)
    print("ok %s: hang-dump names %s, culprits %s, and every rank's line" % (name, truth["kind"], truth["culprits"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
