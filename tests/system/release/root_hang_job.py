"""Inside a distribution root (tests/system/release/in_root_checks.sh): a 2-rank job over the NCCL
stand-in that hangs, started by the release wheel's `hangshim run`, and `hangshim report`'s
verdict checked against the diagnosis the scenario states itself.

    root_hang_job.py --hangshim VENV/bin/hangshim --fakenccl DIR --tests DIR [--scenario NAME]

The job is a scenario of tests/system/scenarios (default barrier_skipped.py: rank 0 skips a barrier()
the other rank waits in) started by their launcher, launch.py, under `hangshim run`, which
preloads the wheel's libhangshim.so into every rank; the ranks load the stand-in libnccl.so.2
and libcuda.so.1 (built the portable way by scripts/release.sh) from --fakenccl (LD_LIBRARY_PATH),
and meet as the stand-in's ranks do: rank 0 publishes the NCCL unique id in launch.py's
rendezvous directory (HANGSHIM_RENDEZVOUS), the id names a POSIX shared-memory segment (/dev/shm,
which run_root_checks.py binds into the root with /dev). Everything runs
with this system's python3 and its standard library only. The report is held to the scenario's
truth (its own record of where each rank blocked: culprit, collective, call-site line,
iteration) by the report tests' own checker (tests/preload/report/run_report_case.py). Prints one line,
"ok: ..." or "FAILED: ..."; exit 0 or 1.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile

RANKS = 2


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hangshim", required=True)
    parser.add_argument("--fakenccl", required=True)
    parser.add_argument("--tests", required=True, help="a copy of the source tree's tests/ (system/scenarios, preload/report, common)")
    parser.add_argument("--scenario", default="barrier_skipped.py")
    args = parser.parse_args()
    sys.path.insert(0, os.path.join(args.tests, "preload", "report"))
    from report_test_lib import LIBRARY_PATHS, Failure, expect
    from run_report_case import Checker

    work = tempfile.mkdtemp(prefix="hangshim-root-job-")
    ledgers = os.path.join(work, "ledgers")
    truth_path = os.path.join(work, "truth.json")
    status_path = os.path.join(work, "status.json")
    env = dict(os.environ)
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LD_PRELOAD", "HANGSHIM_DIR"):
        env.pop(name, None)
    env.update(LD_LIBRARY_PATH=args.fakenccl, HANGSHIM_LIBRARY_PATHS=LIBRARY_PATHS, PYTHONDONTWRITEBYTECODE="1")
    scenarios = os.path.join(args.tests, "system", "scenarios")
    command = [args.hangshim, "run", "--dir", ledgers, "--stall", "2", "--quiet", "--",
               sys.executable, os.path.join(scenarios, "launch.py"), "-n", str(RANKS), "--timeout", "60",
               "--hang-after", "3", "--keep-hung", "--quiet", "--truth", truth_path, "--status", status_path,
               "--workdir", os.path.join(work, "run"), "--env", "HANGSHIM_POLL_MS=20",
               "--", sys.executable, os.path.join(scenarios, args.scenario)]
    pids = []
    try:
        job = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             universal_newlines=True, timeout=90)
        expect(os.path.exists(status_path) and os.path.exists(truth_path),
               "the job left no status or truth (hangshim run exit %d):\n%s" % (job.returncode, job.stdout[-3000:]))
        with open(status_path) as f:
            status = json.load(f)
        pids = [r["pid"] for r in status["ranks"] if r["running"]]
        with open(truth_path) as f:
            truth = json.load(f)
        expect(status["state"] == "hung" and job.returncode == 3,
               "the job should hang (launch.py exit 3), but it ended %s, exit %d:\n%s" %
               (status["state"], job.returncode, job.stdout[-3000:]))

        def hangshim(*arguments):
            p = subprocess.run([args.hangshim] + list(arguments), env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, universal_newlines=True, timeout=60)
            return p.returncode, p.stdout, p.stderr

        code, out, err = hangshim("report", "--json", ledgers)
        expect(code == 0, "hangshim report --json: exit %d: %s" % (code, err.strip()))
        report = json.loads(out)
        checker = Checker(truth, report)
        checker.check_verdict()
        checker.check_ranks()
        code, text, err = hangshim("report", "--exit-status", ledgers)
        checker.check_text(text)
        expect(code == 3, "hangshim report --exit-status gave %d for a hang, not 3" % code)
        print("ok: hangshim run, %d ranks over the stand-in (%s), report: %s" % (
            RANKS, args.scenario, text.splitlines()[0]))
        return 0
    except (Failure, ValueError, subprocess.TimeoutExpired) as e:
        print("FAILED: hangshim run / report on %s: %s" % (args.scenario, e))
        return 1
    finally:
        for pid in pids:
            try:
                os.killpg(pid, signal.SIGKILL)  # each rank leads its own process group
            except OSError:
                pass
        subprocess.call(["rm", "-rf", work])


if __name__ == "__main__":
    sys.exit(main())
