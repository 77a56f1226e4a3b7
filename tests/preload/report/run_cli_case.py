"""`hangshim run` and `hangshim watch`:

  * run: LD_PRELOAD gets libhangshim.so appended (once), HANGSHIM_DIR is set, the command's
    exit status and death by signal come through, a missing command is 127;
  * run + watch on a real hang: a scenario started through `hangshim run` (nothing else
    preloads the shim) leaves ledgers; watch shows the table, then the report naming the
    culprit, exit 3 with --exit-status;
  * watch on a finished job reports at once; on an empty directory --timeout ends it (exit 1).

    run_cli_case.py --hangshim CLI --shim LIB --fakenccl DIR --fixture REPORT_FIXTURE [--pythonpath DIR] [--python PY]
"""

import argparse
import os
import signal
import subprocess
import sys

from report_test_lib import SCENARIOS, Failure, Workspace, common_args, expect


def main():
    p = argparse.ArgumentParser()
    common_args(p)
    p.add_argument("--fixture", required=True)
    args = p.parse_args()
    ws = Workspace(args)
    try:
        shim = os.path.realpath(args.shim)
        env = {"LD_PRELOAD": "", "HANGSHIM_DIR": ""}
        code, out, err = ws.hangshim("run", "--quiet", "--", "sh", "-c", 'echo "$LD_PRELOAD|$HANGSHIM_DIR"; exit 7',
                                     env={"LD_PRELOAD": "/nonexistent/a.so", "HANGSHIM_DIR": ws.ledgers})
        preload, directory = out.strip().split("|")
        expect(code == 7, "exit status %d, the command's was 7" % code)
        expect(preload == "/nonexistent/a.so:" + shim, "LD_PRELOAD=%s" % preload)
        expect(directory == ws.ledgers, "HANGSHIM_DIR=%s" % directory)
        code, out, _ = ws.hangshim("run", "--quiet", "--shim", shim, "--", "sh", "-c", 'echo "$LD_PRELOAD"',
                                   env={"LD_PRELOAD": shim})
        expect(out.strip() == shim, "preloaded twice: %s" % out.strip())
        code, _, err = ws.hangshim("run", "--", "sh", "-c", "kill -TERM $$", env=env)
        expect(code == -signal.SIGTERM, "a command killed by SIGTERM gave %d" % code)
        expect("hangshim report" in err, "run says nothing about where ledgers go: %s" % err)
        code, _, err = ws.hangshim("run", "--", "no-such-command-hangshim", env=env)
        expect(code == 127 and "cannot run no-such-command-hangshim" in err, "missing command: %d %s" % (code, err))
        code, _, err = ws.hangshim("run", env=env)
        expect(code == 2 and "no command" in err, "no command: %d %s" % (code, err))

        # A real hang, the shim preloaded only by `hangshim run`.
        scenario = os.path.join(SCENARIOS, "stuck_dataloader.py")
        saved = ws.args.shim
        ws.args.shim = ""  # launch() must not preload it itself
        run_dir = ws.subdir("run-ledgers")
        truth, status = launch_through_run(ws, scenario, run_dir)
        ws.args.shim = saved
        expect(status["state"] == "hung", "the scenario did not hang: %s" % status["state"])
        ledgers = [n for n in os.listdir(run_dir) if n.endswith(".ledger")]
        expect(len(ledgers) == 2, "hangshim run left ledgers %s" % ledgers)
        code, out, err = ws.hangshim("watch", run_dir, "--interval", "0.2", "--stall", "1", "--exit-status",
                                     "--timeout", "60", timeout=90)
        expect(code == 3, "watch --exit-status gave %d: %s" % (code, err))
        expect("hangshim watch %s" % run_dir in out and "rank 0  in all_reduce #3 on world" in out,
               "no table in:\n%s" % out[:2000])
        verdict = [l for l in out.splitlines() if l.startswith("HANG:")]
        culprit_line = "stuck_dataloader.py:%d" % truth["ranks"]["1"]["callsite"]["line"]  # its loader_wait line
        expect(verdict and verdict[0].startswith("HANG: rank 1 never issued all_reduce #3") and
               culprit_line in verdict[0], "watch's report: %s" % verdict)
        ws.cleanup(keep_files=True)

        finished = ws.subdir("finished")
        made = subprocess.run([args.fixture, "job", finished, "--ranks", "3", "--scenario", "finished"])
        expect(made.returncode == 0, "report_fixture failed")
        code, out, err = ws.hangshim("watch", finished, "--interval", "5", "--exit-status", timeout=90)
        expect(code == 0 and "OK: all 3 ranks finished" in out, "watch on a finished job: %d\n%s%s" % (code, out, err))
        empty = ws.subdir("empty")
        code, out, err = ws.hangshim("watch", empty, "--interval", "0.2", "--timeout", "1", timeout=90)
        expect(code == 1 and "without finding a ledger" in err, "watch --timeout: %d %s" % (code, err))
    except Failure as e:
        print("FAIL run/watch: %s" % e)
        ws.cleanup(keep_files=True)
        print("(kept in %s)" % ws.dir)
        return 1
    finally:
        ws.cleanup(keep_files=True)
    ws.cleanup()
    print("ok hangshim run and watch")
    return 0


def launch_through_run(ws, scenario, ledgers):
    """launch.py starting every rank as `hangshim run --dir LEDGERS -- python scenario`."""
    import json
    truth_path = os.path.join(ws.dir, "truth.json")
    status_path = os.path.join(ws.dir, "status.json")
    command = [ws.args.python, os.path.join(SCENARIOS, "launch.py"), "-n", "2", "--timeout", "120", "--hang-after", "3",
               "--keep-hung", "--quiet", "--truth", truth_path, "--status", status_path,
               "--workdir", os.path.join(ws.dir, "work"), "--env", "HANGSHIM_POLL_MS=20"]
    if ws.args.pythonpath:
        command += ["--env", "PYTHONPATH=" + ws.args.pythonpath]
    command += ["--", ws.args.hangshim, "run", "--quiet", "--dir", ledgers, "--", ws.args.python, scenario]
    subprocess.run(command, env=ws.base_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=180)
    with open(status_path) as f:
        status = json.load(f)
    ws.pids += [r["pid"] for r in status["ranks"] if r["running"]]
    with open(truth_path) as f:
        truth = json.load(f)
    return truth, status


if __name__ == "__main__":
    sys.exit(main())
