"""Check 7, PyTorch's NCCL watchdog: with a short timeout it aborts a collective that never
completes (job_watchdog.py). The ledger records the abort (ncclCommAbort, the communicator
aborted) or NCCL's error, and the verdict says the job was aborted and where: the collective,
its line and iteration the job recorded. Needs PyTorch's NCCL backend on a GPU; the rehearsal
runs the same shape on the stand-in (tests/system/scenarios/verdicts/watchdog_abort.py: the last rank
never issues the collective, the others' watchdog thread calls ncclCommAbort)."""

import json
import os
import sys
import time

import gpu_check as g

STANDIN_JOB = os.path.join(g.SCENARIOS, "verdicts", "watchdog_abort.py")


def assess(ctx, job, codes, truth, aborting):
    """The ledgers of the ranks in `aborting` hold the abort (or NCCL's error), and the report's
    verdict says aborted, with the collective, its line and its iteration as `truth` has them
    (file, line, hung_step, timeout)."""
    evidence = []
    for ledger in g.ledgers(ctx, job.ledgers):
        rank = ledger["process"]["rank"]
        aborts = [r for r in ledger["records"] if r["op"] == "comm_abort"]
        aborted = [c for c in ledger["communicators"] if c["state"] == "aborted" or c["async_error"] != 0]
        if rank in aborting:
            g.expect(aborts or aborted or ledger["first_error"], "rank %d's ledger has no abort and no NCCL error" % rank)
        evidence.append({"rank": rank, "comm_abort_records": len(aborts),
                         "comm_states": [c["state"] for c in ledger["communicators"]], "first_error": ledger["first_error"]})
    verdict = g.report(ctx, job.ledgers)["verdict"]
    summary = verdict["summary"]
    g.expect(verdict["kind"] != "healthy", "the report calls an aborted job healthy: %s" % summary)
    g.expect("abort" in summary.lower(), "the verdict does not say the job was aborted: %s" % summary)
    for part in ("all_reduce #%d" % truth["hung_step"], "%s:%d" % (truth["file"], truth["line"]), "iteration %d" % truth["hung_step"]):
        g.expect(part in summary, "the verdict does not name %s: %s" % (part, summary))
    return "watchdog (timeout %g s) ended the ranks with %s; report: %s" % (truth["timeout"], codes, summary), {
        "exit_codes": codes, "ledgers": evidence, "verdict": verdict}


def on_gpu(ctx):
    job = g.Job(ctx, "watchdog", ["job_watchdog.py", "--steps", "5", "--timeout", "10"], ctx.ranks,
                env={"TORCH_NCCL_ASYNC_ERROR_HANDLING": "1", "TORCH_NCCL_DUMP_ON_TIMEOUT": "0"})
    codes = job.wait(150)
    g.expect(all(c != 0 for c in codes), "ranks exited %s: the watchdog did not end the job" % codes)
    return assess(ctx, job, codes, job.truth(0), set(range(job.ranks)))


def rehearsal(ctx):
    truth_path = os.path.join(ctx.directory("watchdog"), "scenario-truth.json")
    job = g.Job(ctx, "watchdog", [STANDIN_JOB], ctx.ranks, env={"HANGSHIM_SCENARIO_TRUTH": truth_path})
    try:
        # The aborting ranks exit with their error; the last one waits for its batch until it is
        # killed, as torchrun kills the rest of a job once one rank failed.
        deadline = time.time() + 60
        while any(p.poll() is None for p in job.procs[:-1]):
            if time.time() > deadline or job.procs[-1].poll() is not None:
                raise g.Failed("the watchdog did not end ranks 0-%d within 60 s (rank %d %s): %s" % (
                    job.ranks - 2, job.ranks - 1, "exited" if job.procs[-1].poll() is not None else "runs",
                    job.log(0)[-300:]))
            time.sleep(0.1)
    finally:
        job.kill()
    codes = [p.returncode for p in job.procs]
    g.expect(all(c != 0 for c in codes[:-1]), "ranks exited %s: the watchdog did not end the job" % codes)
    with open(truth_path) as f:
        scenario = json.load(f)
    truth = {"file": os.path.basename(scenario["callsite"]["file"]), "line": scenario["callsite"]["line"],
             "hung_step": scenario["seq"], "timeout": scenario["timeout"]}
    return assess(ctx, job, codes, truth, set(scenario["aborted_by"]))


if __name__ == "__main__":
    sys.exit(g.main("watchdog_abort", on_gpu, rehearsal=rehearsal))
