"""scripts/gpu-comm-check.py against the PyTorch stand-in (tests/scripts/fake_torch: this
machine has neither PyTorch nor GPUs), its ranks started the way torchrun starts them (RANK,
WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT):

  --case ok --ranks N   every rank prints "rank R/N host H device cpu: all_reduce OK (sum N)
                        barrier OK in X ms" and exits 0;
  --case skip           one rank never arrives (FAKE_TORCH_SKIP_RANK): the others print a FAIL
                        line naming all_reduce and the timeout, after at least the timeout
                        and ended by their own timeout error, not the watchdog; the one that
                        never arrives is ended by the script's watchdog; all exit 1;
  --case usage          without PyTorch: one line "gpu-comm-check: PyTorch is not installed for
                        <python>: ...", exit 2; not under a launcher, or --backend nccl without
                        GPUs: one line, exit 2.

    run_gpu_comm_check.py --script FILE --python PY --case ok|skip|usage [--ranks N]
"""

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE_TORCH = os.path.join(HERE, "fake_torch")
TIMEOUT_S = 2
WATCHDOG_GRACE_S = 5  # scripts/gpu-comm-check.py's
# Only a hung job reaches this: the ranks are judged by what they print, never by how long they took.
JOB_DEADLINE_S = 90  # under ctest's 120 s for the test, so a hang fails here, with a message


class Failure(Exception):
    pass


def expect(ok, what):
    if not ok:
        raise Failure(what)


def rank_env(rank, world, store, extra=None):
    env = dict(os.environ)
    env.update({"RANK": str(rank), "WORLD_SIZE": str(world), "LOCAL_RANK": str(rank), "MASTER_ADDR": "127.0.0.1",
                "MASTER_PORT": "29500", "FAKE_TORCH_STORE": store, "PYTHONPATH": FAKE_TORCH})
    env.update(extra or {})
    return env


def run_job(args, world, extra=None):
    """Starts `world` ranks at once; returns [(exit code, stdout, stderr)]."""
    store = tempfile.mkdtemp(prefix="hangshim-fake-torch-")
    try:
        procs = [subprocess.Popen([args.python, args.script, "--backend", "gloo", "--timeout", str(TIMEOUT_S),
                                   "--elements", "4096"], env=rank_env(r, world, store, extra),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
                 for r in range(world)]
        results = []
        try:
            for p in procs:
                out, err = p.communicate(timeout=JOB_DEADLINE_S)
                results.append((p.returncode, out, err))
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        return results
    finally:
        shutil.rmtree(store, ignore_errors=True)


def prefix(rank, world):
    return "rank %d/%d host %s device cpu: " % (rank, world, socket.gethostname())


def case_ok(args):
    world = args.ranks
    results = run_job(args, world)
    for rank, (code, out, err) in enumerate(results):
        pattern = re.escape(prefix(rank, world)) + r"all_reduce OK \(sum %d\) barrier OK in [0-9.]+ ms\n$" % world
        expect(code == 0 and re.match(pattern, out),
               "rank %d: exit %d, printed %r (stderr %r)" % (rank, code, out, err))
    print("ok %d ranks: %s" % (world, results[0][1].strip()))


def case_skip(args):
    world, skipped = 3, 1
    results = run_job(args, world, {"FAKE_TORCH_SKIP_RANK": str(skipped)})
    for rank, (code, out, err) in enumerate(results):
        expect(code == 1, "rank %d: exit %d (expected 1): %r %r" % (rank, code, out, err))
        expect(out.startswith(prefix(rank, world) + "FAIL in all_reduce after ") and len(out.splitlines()) == 1,
               "rank %d printed %r" % (rank, out))
        if rank == skipped:
            expect("no answer after %d s" % (TIMEOUT_S + WATCHDOG_GRACE_S) in out,
                   "rank %d (never arrives): not ended by the watchdog: %r" % (rank, out))
        else:
            # Ended by the collective's own timeout error (a lower bound on the time it took), and
            # not by the watchdog, which would have printed "no answer after": decided from the
            # line the rank printed, not from a wall-clock upper bound a loaded machine can pass.
            ms = float(re.search(r"after ([0-9.]+) ms", out).group(1))
            expect("Timed out" in out and "no answer after" not in out and TIMEOUT_S * 1000 <= ms,
                   "rank %d: not the timeout after %ds: %r" % (rank, TIMEOUT_S, out))
    print("ok one rank never arrives: %s" % results[0][1].strip())


def one_line(what, p, code, start):
    expect(p.returncode == code and len(p.stderr.splitlines()) == 1 and p.stderr.startswith(start) and not p.stdout,
           "%s: exit %d (expected %d), stdout %r, stderr %r" % (what, p.returncode, code, p.stdout, p.stderr))
    print("ok %s: %s" % (what, p.stderr.strip()))


def case_usage(args):
    def run(argv, env):
        return subprocess.run([args.python] + argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=60)

    store = tempfile.mkdtemp(prefix="hangshim-fake-torch-")
    try:
        bare = dict(os.environ)
        bare.pop("PYTHONPATH", None)
        # -S -E: no site-packages, no PYTHONPATH: PyTorch cannot be importable, whatever is installed.
        no_torch = run(["-S", "-E", args.script, "--backend", "gloo"], rank_env(0, 1, store))
        one_line("without PyTorch", no_torch, 2, "gpu-comm-check: PyTorch is not installed for ")
        env = rank_env(0, 1, store)
        for name in ("RANK", "MASTER_PORT"):
            del env[name]
        one_line("not under a launcher", run([args.script, "--backend", "gloo"], env),
                 2, "gpu-comm-check: RANK, MASTER_PORT not set")
        one_line("nccl without GPUs", run([args.script], rank_env(0, 1, store)),
                 2, "gpu-comm-check: CUDA is not available")
        bad = run([args.script, "--timeout", "0"], bare)
        expect(bad.returncode == 2 and "error: --timeout must be a positive number" in bad.stderr,
               "--timeout 0: exit %d, stderr %r" % (bad.returncode, bad.stderr))
        print("ok a bad timeout")
    finally:
        shutil.rmtree(store, ignore_errors=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--script", required=True)
    p.add_argument("--python", required=True)
    p.add_argument("--case", required=True, choices=("ok", "skip", "usage"))
    p.add_argument("--ranks", type=int, default=2)
    args = p.parse_args()
    try:
        {"ok": case_ok, "skip": case_skip, "usage": case_usage}[args.case](args)
    except (Failure, subprocess.TimeoutExpired) as e:
        print("FAIL %s: %s" % (args.case, e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
