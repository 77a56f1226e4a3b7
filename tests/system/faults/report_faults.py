"""Fault injection against `hangshim report`:

  * killed_mid_write: ranks of a job issue collectives from several threads as fast as they can
    (ledger writes all the time); one rank is SIGKILLed at a random moment, most likely in the
    middle of writing a record. Its ledger stays readable (`hangshim ledger`), and the report,
    taken while the survivors are stuck waiting for it, names it as the culprit. Repeated with
    different ranks and moments.
  * cut_while_reading: the ledgers of a 256-rank job are truncated, overwritten with garbage and
    restored, in place, by another thread while `hangshim report` reads them again and again.
    Every report finishes in time, exits 0 (or 1 when nothing was readable), never dies of a
    signal, prints a verdict, and names each file it could not use on one `hangshim:` line; once
    the files are restored the verdict is the pristine one.

    report_faults.py --case killed_mid_write|cut_while_reading --hangshim CLI [--shim LIB
                     --driver EXE --fakenccl DIR] [--fixture EXE]
"""

import argparse
import glob
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
from driver import run_in_scratch  # noqa: E402
from expect import Failure, expect  # noqa: E402


# How every verdict line the report can print begins (preload/report/wording/state_words.cpp,
# init_failure_words.cpp, phrases.cpp). Damage may turn the stuck job into any of them: a byte
# overwritten in a record can make it an error or an init failure; the test asks for a verdict.
VERDICT_HEADS = ("HANG:", "OK:", "NO HANG", "ERROR:", "INIT FAILED:", "NO NCCL CALLS:", "NO DATA:", "ENDED:")


def run(argv, timeout=60, env=None):
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        raise Failure("%s did not finish within %d s" % (" ".join(argv), timeout))
    # Whatever a damaged file holds, the tools print text: bytes that are not UTF-8 are a finding.
    for name in ("stdout", "stderr"):
        try:
            setattr(p, name, getattr(p, name).decode("utf-8"))
        except UnicodeDecodeError as e:
            raise Failure("%s wrote bytes that are not UTF-8 on %s (%s): %r" %
                          (" ".join(argv), name, e, getattr(p, name)[max(0, e.start - 200):e.end + 50]))
    expect(p.returncode >= 0, "%s died of signal %d: %s" % (" ".join(argv), -p.returncode, p.stderr[-2000:]))
    return p


def ledger_json(args, path):
    p = run([args.hangshim, "ledger", "--json", path])
    expect(p.returncode == 0, "hangshim ledger %s exited %d: %s" % (path, p.returncode, p.stderr.strip()))
    return json.loads(p.stdout)


def killed_mid_write(args, work):
    rng = random.Random(int(time.time()))
    for attempt in range(4):
        directory = os.path.join(work, "ledgers%d" % attempt)
        os.mkdir(directory, 0o700)
        env = dict(os.environ, LD_PRELOAD=args.shim, HANGSHIM_DIR=directory, HANGSHIM_POLL_MS="20",
                   LD_LIBRARY_PATH=args.fakenccl + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""))
        for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
            env.pop(k, None)
        job = subprocess.Popen([args.driver, "threads", "4", "3", "100000000"], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            # Wait until every rank is busy recording, then kill one at a random moment.
            deadline = time.time() + 60
            pids = {}
            while time.time() < deadline:
                files = glob.glob(os.path.join(directory, "*.ledger"))
                if len(files) == 4:
                    ledgers = [ledger_json(args, f) for f in files]
                    if all(sum(c["coll_issued"] for c in l["communicators"]) > 200 for l in ledgers):
                        pids = {l["process"]["rank"]: l["process"]["pid"] for l in ledgers}
                        break
                time.sleep(0.05)
            expect(len(pids) == 4, "the job's 4 ranks never got busy (ledgers: %s)" % os.listdir(directory))
            victim = rng.randrange(4)
            time.sleep(rng.uniform(0.0, 0.3))
            os.kill(pids[victim], signal.SIGKILL)
            victim_file = [f for f in glob.glob(os.path.join(directory, "*.ledger"))
                           if ledger_json(args, f)["process"]["pid"] == pids[victim]]
            expect(len(victim_file) == 1, "the killed rank's ledger is gone or unreadable")
            # The survivors go on to block in the collective the victim never joins: the report
            # is read until it names the victim (however long a loaded machine takes to get the
            # survivors there), and only a report that never does fails, at the deadline.
            deadline = time.time() + 120
            while True:
                p = run([args.hangshim, "report", "--json", "--no-stacks", directory])
                expect(p.returncode == 0, "report exited %d: %s" % (p.returncode, p.stderr.strip()))
                verdict = json.loads(p.stdout)["verdict"]
                if (verdict["problem"] and verdict["culprits"] == [victim]) or time.time() > deadline:
                    break
                time.sleep(0.2)
            expect(verdict["problem"] and verdict["culprits"] == [victim],
                   "attempt %d: rank %d was killed, the report says %s: %s" %
                   (attempt, victim, verdict["culprits"], verdict["summary"]))
            print("attempt %d: killed rank %d; %s" % (attempt, victim, verdict["summary"]))
        finally:
            os.killpg(job.pid, signal.SIGKILL)
            job.wait()


def cut_while_reading(args, work):
    directory = os.path.join(work, "job")
    pristine = os.path.join(work, "pristine")
    p = run([args.fixture, "job", directory, "--ranks", "256", "--scenario", "stuck"])
    expect(p.returncode == 0, "report_fixture failed: %s" % p.stderr)
    shutil.copytree(directory, pristine)
    good = run([args.hangshim, "report", "--json", "--no-stacks", directory])
    expect(good.returncode == 0, "report of the pristine job exited %d" % good.returncode)
    want = json.loads(good.stdout)["verdict"]
    files = sorted(os.listdir(directory))
    stop = threading.Event()
    damage = {"cuts": 0}

    def vandal():
        rng = random.Random(7)
        while not stop.is_set():
            name = rng.choice(files)
            path = os.path.join(directory, name)
            size = os.path.getsize(os.path.join(pristine, name))
            with open(path, "r+b") as f:
                action = rng.randrange(3)
                if action == 0:
                    f.truncate(rng.randrange(size))
                elif action == 1:
                    f.seek(rng.randrange(size))
                    f.write(os.urandom(rng.randrange(1, 4096)))
                else:
                    with open(os.path.join(pristine, name), "rb") as src:
                        f.truncate(0)
                        f.write(src.read())
            damage["cuts"] += 1

    thread = threading.Thread(target=vandal)
    thread.start()
    try:
        for i in range(15):
            p = run([args.hangshim, "report", "--no-stacks", directory], timeout=60)
            expect(p.returncode in (0, 1), "report %d exited %d: %s" % (i, p.returncode, p.stderr[-2000:]))
            first = p.stdout.splitlines()[0] if p.stdout else ""
            expect(p.returncode == 1 or first.startswith(VERDICT_HEADS),
                   "report %d printed no verdict: %r" % (i, first))
            for line in p.stderr.splitlines():
                expect(line.startswith("hangshim: "), "report %d: stderr line not naming its file: %r" % (i, line))
    finally:
        stop.set()
        thread.join()
    for name in files:
        shutil.copyfile(os.path.join(pristine, name), os.path.join(directory, name))
    after = run([args.hangshim, "report", "--json", "--no-stacks", directory])
    expect(after.returncode == 0 and json.loads(after.stdout)["verdict"] == want,
           "after restoring the files the verdict differs from the pristine one")
    print("15 reports while the files were cut or overwritten %d times: all finished; verdict restored: %s" %
          (damage["cuts"], want["summary"]))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", required=True, choices=["killed_mid_write", "cut_while_reading"])
    parser.add_argument("--hangshim", required=True)
    parser.add_argument("--shim")
    parser.add_argument("--driver")
    parser.add_argument("--fakenccl")
    parser.add_argument("--fixture")
    args = parser.parse_args()
    case = {"killed_mid_write": killed_mid_write, "cut_while_reading": cut_while_reading}[args.case]
    return run_in_scratch("hangshim-report-faults.", lambda work: case(args, work), mode=0o700)


if __name__ == "__main__":
    sys.exit(main())
