"""What the report tests share: a private ledger directory, running a scenario with the shim
preloaded and leaving a hung job running (launch.py --keep-hung), killing it afterwards, and
running the hangshim command."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIOS = os.path.join(HERE, "..", "..", "system", "scenarios")
# The scenarios' own library frames: the caller of ncclpy is "your line", as torch's caller is.
LIBRARY_PATHS = "/ncclpy.py:/scenario_lib.py"


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
from expect import Failure, expect  # noqa: E402,F401  (the drivers beside this one import them from here)
from rank_lists import rank_text  # noqa: E402,F401  (the rank list as the report writes it; drivers import it from here)


def run_checks(name, prefix, body, passed):
    """Runs body(work) in a new temporary directory: prints "ok NAME: PASSED" and removes it, or
    "FAIL NAME: why" and keeps it to look at. Returns the exit status."""
    work = tempfile.mkdtemp(prefix=prefix)
    try:
        body(work)
    except Failure as e:
        print("FAIL %s: %s" % (name, e))
        print("(kept in %s)" % work)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print("ok %s: %s" % (name, passed))
    return 0


class Workspace(object):
    """A temporary directory with a 0700 ledger directory; hung jobs started here are killed
    and everything is removed by cleanup()."""

    def __init__(self, args):
        self.args = args
        self.dir = tempfile.mkdtemp(prefix="hangshim-report-")
        self.ledgers = self.subdir("ledgers")
        self.pids = []

    def subdir(self, name):
        path = os.path.join(self.dir, name)
        os.mkdir(path, 0o700)
        return path

    def base_env(self):
        env = dict(os.environ)
        for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LD_PRELOAD", "HANGSHIM_DIR"):
            env.pop(k, None)
        env["LD_LIBRARY_PATH"] = self.args.fakenccl + os.pathsep + env.get("LD_LIBRARY_PATH", "")
        env["HANGSHIM_LIBRARY_PATHS"] = LIBRARY_PATHS
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        return env

    def launch(self, scenario, ranks, python, ledgers=None, hang_after=3):
        """Runs the scenario; returns (truth, status). A hung job stays running (its pids are
        remembered for cleanup)."""
        self.launches = getattr(self, "launches", 0) + 1
        truth_path = os.path.join(self.dir, "truth.%d.json" % self.launches)
        status_path = os.path.join(self.dir, "status.%d.json" % self.launches)
        workdir = os.path.join(self.dir, "work.%d" % self.launches)  # a fresh rendezvous each time
        extra = ["HANGSHIM_DIR=" + (ledgers or self.ledgers), "HANGSHIM_POLL_MS=20", "HANGSHIM_STALL_SECONDS=2",
                 "HANGSHIM_LIBRARY_PATHS=" + LIBRARY_PATHS, "LD_PRELOAD=" + self.args.shim]
        if self.args.pythonpath:
            extra.append("PYTHONPATH=" + self.args.pythonpath)
        if self.args.nccl_load:
            extra.append("HANGSHIM_SCENARIO_NCCL_LOAD=" + self.args.nccl_load)
        command = [python, os.path.join(SCENARIOS, "launch.py"), "-n", str(ranks), "--timeout", "120",
                   "--hang-after", str(hang_after), "--keep-hung", "--quiet", "--truth", truth_path,
                   "--status", status_path, "--workdir", workdir]
        for kv in extra:
            command += ["--env", kv]
        command += ["--", python, scenario]
        proc = subprocess.run(command, env=self.base_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, timeout=180)
        expect(os.path.exists(status_path), "launch.py wrote no status:\n%s" % proc.stdout[-3000:])
        with open(status_path) as f:
            status = json.load(f)
        self.pids += [r["pid"] for r in status["ranks"] if r["running"]]
        expect(os.path.exists(truth_path), "the scenario wrote no truth:\n%s" % proc.stdout[-3000:])
        with open(truth_path) as f:
            truth = json.load(f)
        return truth, status

    def hangshim(self, *arguments, **kw):
        env = self.base_env()
        env.update(kw.get("env", {}))
        p = subprocess.run([self.args.hangshim] + list(arguments), env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, timeout=kw.get("timeout", 60))
        return p.returncode, p.stdout, p.stderr

    def report_json(self, *paths):
        code, out, err = self.hangshim("report", "--json", *paths)
        expect(code == 0, "hangshim report --json %s: exit %d: %s" % (" ".join(paths), code, err.strip()))
        try:
            return json.loads(out)
        except ValueError as e:
            raise Failure("hangshim report --json printed invalid JSON (%s):\n%s" % (e, out[:2000]))

    def cleanup(self, keep_files=False):
        for pid in self.pids:
            try:
                os.killpg(pid, signal.SIGKILL)  # each rank leads its own process group
            except OSError:
                pass
        self.pids = []
        if not keep_files:
            shutil.rmtree(self.dir, ignore_errors=True)


def common_args(parser):
    parser.add_argument("--hangshim", required=True)
    parser.add_argument("--shim", required=True)
    parser.add_argument("--fakenccl", required=True)
    parser.add_argument("--pythonpath", default="")
    parser.add_argument("--python", default=sys.executable)
    # private: ncclpy loads NCCL with a plain ctypes.CDLL (its own handle, tests/system/scenarios/ncclpy.py)
    parser.add_argument("--nccl-load", choices=("global", "private"), default="")


