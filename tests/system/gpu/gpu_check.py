"""What the checks of tests/system/gpu/run.sh share: where the tools are, how a job is started under
`hangshim run` (one process per rank, as torchrun would), how ledgers and reports are read, and
how a check states its result.

run.sh passes everything through the environment (GPU_CHECK_*): the mode (`gpu`: real CUDA, NCCL
and PyTorch; `rehearse`: the CPU stand-in, standin/), the tools, the interpreter, a work
directory, and $OUT. A check prints exactly one line, `PASS|FAIL|SKIP name: figures`, and adds
{name, status, figures, details} to $OUT/gpu-checks.json when $OUT is set. Every expectation is
compared with what the job itself recorded (its truth file: lines from its own frames, its step
counter), never with text written down here.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIOS = os.path.join(os.path.dirname(HERE), "scenarios")


class Failed(Exception):
    """An expectation of the check did not hold; the message is the figure shown."""


class Skipped(Exception):
    """A component the check needs is missing here (the message says which): never a pass."""


def expect(condition, message):
    if not condition:
        raise Failed(message)


class Context(object):
    def __init__(self):
        env = os.environ
        self.mode = env.get("GPU_CHECK_MODE", "")
        if self.mode not in ("gpu", "rehearse"):
            raise SystemExit("%s: run it through tests/system/gpu/run.sh (GPU_CHECK_MODE is %r)" % (sys.argv[0], self.mode))
        self.hangshim = env["GPU_CHECK_HANGSHIM"]
        self.pyframes = env["GPU_CHECK_PYFRAMES"]
        self.shim = env["GPU_CHECK_SHIM"]
        self.python = env.get("GPU_CHECK_PYTHON", sys.executable)
        self.standin = env.get("GPU_CHECK_STANDIN", "")
        self.work = env["GPU_CHECK_WORK"]
        self.out = env.get("OUT", "")
        self.ranks = int(env.get("GPU_CHECK_RANKS", "2"))

    @property
    def gpu(self):
        return self.mode == "gpu"

    def directory(self, name):
        path = os.path.join(self.work, name)
        os.makedirs(path, mode=0o700, exist_ok=True)
        return path


def result(ctx, status, name, figures, details=None):
    """Prints the check's one line and records it in $OUT/gpu-checks.json (checks run one at a time)."""
    print("%s %s: %s" % (status, name, figures), flush=True)
    if not ctx.out:
        return
    path = os.path.join(ctx.out, "gpu-checks.json")
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError):
        data = {"checks": []}
    data.setdefault("checks", []).append({"name": name, "status": status, "mode": ctx.mode,
                                          "figures": figures, "details": details or {}})
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
    os.replace(tmp, path)


def main(name, gpu_check, rehearsal=None, skip_rehearsal=None):
    """Runs one check: gpu_check(ctx) on a GPU, rehearsal(ctx) on the stand-in, or SKIP with
    skip_rehearsal's reason. A check returns (figures, details); Failed is a FAIL."""
    ctx = Context()
    if not ctx.gpu and rehearsal is None:
        result(ctx, "SKIP", name, skip_rehearsal)
        return 0
    details = {}
    try:
        figures, details = (gpu_check if ctx.gpu else rehearsal)(ctx)
    except Skipped as e:
        result(ctx, "SKIP", name, str(e), details)
        return 0
    except Failed as e:
        result(ctx, "FAIL", name, str(e), details)
        return 1
    except Exception as e:  # a broken check is a failure with its reason, never a pass
        result(ctx, "FAIL", name, "%s: %s" % (type(e).__name__, e), details)
        return 1
    result(ctx, "PASS", name, figures, details)
    return 0


# --- jobs -----------------------------------------------------------------------------------

class Job(object):
    """`ranks` processes of `argv` (a Python program and its arguments), each started as
    `hangshim run --dir LEDGERS -- PYTHON argv` with RANK/WORLD_SIZE/LOCAL_RANK and a rendezvous
    (torch's env:// store on GPU; a directory for the stand-in), in its own process group.
    Each rank's output goes to rank.N.log; its truth file is truth.N.json."""

    def __init__(self, ctx, name, argv, ranks, env=None, shim=True):
        self.ctx = ctx
        self.dir = ctx.directory(name)
        self.ledgers = os.path.join(self.dir, "ledgers")
        os.makedirs(self.ledgers, mode=0o700, exist_ok=True)
        self.ranks = ranks
        self.procs = []
        port = str(29500 + os.getpid() % 2000)
        for rank in range(ranks):
            renv = dict(os.environ)
            renv.update({"RANK": str(rank), "WORLD_SIZE": str(ranks), "LOCAL_RANK": str(rank),
                         "LOCAL_WORLD_SIZE": str(ranks), "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port,
                         "HANGSHIM_RENDEZVOUS": self.dir, "PYTHONUNBUFFERED": "1",
                         "GPU_CHECK_TRUTH": os.path.join(self.dir, "truth.%d.json" % rank)})
            if not ctx.gpu:
                renv["LD_LIBRARY_PATH"] = ctx.standin + (":" + renv["LD_LIBRARY_PATH"] if renv.get("LD_LIBRARY_PATH") else "")
                renv["PYTHONPATH"] = SCENARIOS
                # ncclpy (the stand-in's binding) plays the part torch plays on a GPU: a library,
                # so the job's own line is its call-site's user frame.
                renv["HANGSHIM_LIBRARY_PATHS"] = "/ncclpy.py:/scenario_lib.py"
            renv.update(env or {})
            command = [ctx.python] + argv
            if shim:
                command = [ctx.hangshim, "run", "--dir", self.ledgers, "--shim", ctx.shim, "--quiet", "--"] + command
            log = open(self.log_path(rank), "wb")
            self.procs.append(subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                               env=renv, cwd=HERE, start_new_session=True))
            log.close()

    def log_path(self, rank):
        return os.path.join(self.dir, "rank.%d.log" % rank)

    def log(self, rank):
        with open(self.log_path(rank), errors="replace") as f:
            return f.read()

    def truth(self, rank):
        with open(os.path.join(self.dir, "truth.%d.json" % rank)) as f:
            return json.load(f)

    def wait(self, timeout):
        """Exit codes of every rank; Failed when they run past `timeout` seconds."""
        deadline = time.time() + timeout
        for p in self.procs:
            try:
                p.wait(max(0.1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                self.kill()
                raise Failed("the job ran past %g s (log tail: %s)" % (timeout, self.log(0)[-300:]))
        return [p.returncode for p in self.procs]

    def wait_ok(self, timeout, what="the job"):
        """wait(timeout), and Failed unless every rank exited 0."""
        codes = self.wait(timeout)
        expect(codes == [0] * self.ranks, "%s exited %s (rank 0's log: %s)" % (what, codes, self.log(0)[-300:]))

    def ranked_ledgers(self, ctx):
        """(rank, ledger, the rank's truth) for every ledger the job left."""
        for ledger in ledgers(ctx, self.ledgers):
            rank = ledger["process"]["rank"]
            yield rank, ledger, self.truth(rank)

    def wait_for_line(self, rank, pattern, timeout):
        """Seconds until rank's output has a line matching `pattern`, and the line."""
        start = time.time()
        while time.time() - start < timeout:
            m = re.search(pattern, self.log(rank), re.M)
            if m:
                return time.time() - start, m.group(0)
            if self.procs[rank].poll() is not None:
                raise Failed("rank %d exited (%d) before printing /%s/: %s" % (
                    rank, self.procs[rank].returncode, pattern, self.log(rank)[-300:]))
            time.sleep(0.1)
        raise Failed("rank %d printed no line matching /%s/ within %g s" % (rank, pattern, timeout))

    def wait_for_truth(self, rank, key, timeout):
        """The rank's truth once it holds `key` (a job writes it before it blocks)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                truth = self.truth(rank)
                if key in truth:
                    return truth
            except (OSError, ValueError):
                pass
            if self.procs[rank].poll() is not None:
                raise Failed("rank %d exited (%d) early: %s" % (rank, self.procs[rank].returncode, self.log(rank)[-300:]))
            time.sleep(0.1)
        raise Failed("rank %d recorded no %r within %g s" % (rank, key, timeout))

    def pid(self, rank):
        """The rank's Python process (hangshim run replaces itself with it)."""
        return self.procs[rank].pid

    def kill(self):
        for p in self.procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
        for p in self.procs:
            p.wait()


def run_tool(argv, timeout=60):
    run = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=timeout)
    return run.returncode, run.stdout, run.stderr


def ledgers(ctx, directory):
    """Every ledger file in `directory`, read with `hangshim ledger --json --all`."""
    found = []
    for name in sorted(os.listdir(directory)):
        if name.endswith(".ledger"):
            code, out, err = run_tool([ctx.hangshim, "ledger", os.path.join(directory, name), "--json", "--all"])
            expect(code == 0, "hangshim ledger %s: exit %d: %s" % (name, code, err.strip()[:200]))
            found.append(json.loads(out))
    expect(found, "no ledger in %s: the shim recorded nothing" % directory)
    return found


def report(ctx, *paths):
    """`hangshim report --json PATHS` as a dict."""
    code, out, err = run_tool([ctx.hangshim, "report", "--json"] + list(paths))
    try:
        return json.loads(out)
    except ValueError:
        raise Failed("hangshim report --json: exit %d, no JSON: %s" % (code, (err or out).strip()[:300]))


def user_site(ledger, callsite_id):
    """(file basename, line) of the user's frame of a call-site of the ledger, or None."""
    for c in ledger["callsites"]:
        if c["id"] == callsite_id and 0 <= c["user_frame"] < len(c["frames"]):
            frame = c["frames"][c["user_frame"]]
            return os.path.basename(frame["file"]), frame["line"]
    return None


def records(ledger, op):
    """The ledger's records of `op` (e.g. all_reduce) that ran (not simulated)."""
    return [r for r in ledger["records"] if r["op"] == op and not r["simulated"]]


def check_calls(ledger, op, site, count, events):
    """Every one of the `count` `op` records is at `site` ((file, line)) with iteration 1..count,
    completed (by a CUDA event when `events`); returns the ledger's figures."""
    rank = ledger["process"]["rank"]
    calls = records(ledger, op)
    expect(len(calls) == count, "rank %d: %d %s records, the job issued %d" % (rank, len(calls), op, count))
    for i, r in enumerate(calls, 1):
        got = user_site(ledger, r["callsite"])
        expect(got == site, "rank %d: %s #%d recorded at %s, the job issued it at %s:%d" % (rank, op, r["seq"], got, site[0], site[1]))
        expect(r["callsite_hit"] == i, "rank %d: %s #%d has iteration %d, the job was at %d" % (rank, op, r["seq"], r["callsite_hit"], i))
        expect(r["completed_ns"] > 0, "rank %d: %s #%d still pending at the end" % (rank, op, r["seq"]))
        if events:
            expect(r["event_tracked"], "rank %d: %s #%d completed without a CUDA event" % (rank, op, r["seq"]))
    pending = sum(c["coll_issued"] - c["coll_completed"] + c["p2p_issued"] - c["p2p_completed"] for c in ledger["communicators"])
    return {"rank": rank, "calls": len(calls), "event_tracked": sum(1 for r in calls if r["event_tracked"]),
            "pending": pending, "features": ledger["process"]["features"]}
