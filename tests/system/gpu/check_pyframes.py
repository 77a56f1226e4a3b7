"""Check 6, pyframes on a live job: `pyframes PID` and `pyframes --native PID` on a rank blocked
in a hung collective show the line the job recorded as where it blocks. Where the sandbox (gVisor,
a container without ptrace) forbids reading another process, the evidence is the shim's own
stack dump written at the stall (in-process, no ptrace), and the figures say which way it went.
GPU: job_device_hang.py, blocked in torch.cuda.synchronize(); rehearsal: standin_loop.py's rank 0
blocked in its all_reduce on the stand-in."""

import os
import re
import sys
import time

import gpu_check as g

DENIED = re.compile(r"permission|not permitted|ptrace|denied|cannot read", re.I)


def frames_show(text, file, line):
    return re.search(r"\(\S*%s:%d\)" % (re.escape(file), line), text) is not None


def verify(ctx, job, rank, file, line):
    pid = job.pid(rank)
    time.sleep(1.0)  # the job recorded where it will block just before blocking there
    outcomes = {}
    for argv in ([ctx.pyframes, str(pid)], [ctx.pyframes, "--native", str(pid)]):
        code, out, err = g.run_tool(argv, timeout=60)
        outcomes[" ".join(["pyframes"] + argv[1:-1] + ["PID"])] = {"exit": code, "shows_line": frames_show(out, file, line),
                                                                    "error": err.strip()[-300:]}
    read = [k for k, v in outcomes.items() if v["exit"] == 0]
    if len(read) == len(outcomes):
        missing = [k for k, v in outcomes.items() if not v["shows_line"]]
        g.expect(not missing, "%s ran but does not show %s:%d (where the job blocks)" % (", ".join(missing), file, line))
        return "pyframes PID and --native PID show %s:%d (way: ptrace)" % (file, line), {"way": "pyframes", "runs": outcomes}
    errors = " ".join(v["error"] for v in outcomes.values())
    g.expect(DENIED.search(errors), "pyframes failed for another reason than a forbidden read: %s" % errors)
    # the sandbox forbids reading the process: the shim's own dump, written at the stall, is the evidence
    job.wait_for_line(rank, r"^hangshim: rank \d+ .* stalled: ", 60)
    ledger = [lg for lg in g.ledgers(ctx, job.ledgers) if lg["process"]["rank"] == rank][0]
    stacks_file = ledger["process"]["stacks_file"]
    g.expect(stacks_file and os.path.exists(stacks_file), "no stack dump of the shim at %r" % stacks_file)
    with open(stacks_file, errors="replace") as f:
        dump = f.read()
    g.expect("%s:%d" % (file, line) in dump or frames_show(dump, file, line),
             "the shim's stack dump %s does not show %s:%d" % (stacks_file, file, line))
    return ("reading another process is forbidden here (%s); the shim's own stack dump shows %s:%d (way: shim dump)" % (
        errors[:120], file, line), {"way": "shim-dump", "runs": outcomes, "stacks_file": stacks_file})


def on_gpu(ctx):
    job = g.Job(ctx, "pyframes", ["job_device_hang.py", "--steps", "3"], ctx.ranks, env={"HANGSHIM_STALL_SECONDS": "2"})
    try:
        truth = job.wait_for_truth(0, "blocked_line", 120)
        return verify(ctx, job, 0, truth["file"], truth["blocked_line"])
    finally:
        job.kill()


def rehearse(ctx):
    job = g.Job(ctx, "pyframes", ["standin_loop.py", "--steps", "3", "--hang-at", "3"], ctx.ranks,
                env={"HANGSHIM_STALL_SECONDS": "2"})
    try:
        truth = job.wait_for_truth(0, "issued_at", 120)
        return verify(ctx, job, 0, truth["file"], truth["line"])  # rank 0 blocks in the all_reduce itself
    finally:
        job.kill()


if __name__ == "__main__":
    sys.exit(g.main("pyframes", on_gpu, rehearse))
