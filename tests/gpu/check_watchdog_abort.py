"""Check 7, PyTorch's NCCL watchdog: with a short timeout it aborts a collective that never
completes (job_watchdog.py). The ledger records the abort (ncclCommAbort, the communicator
aborted) or NCCL's error, and the verdict says the job was aborted and where: the collective,
its line and iteration the job recorded. Needs PyTorch's NCCL backend on a GPU."""

import sys

import gpu_check as g


def on_gpu(ctx):
    job = g.Job(ctx, "watchdog", ["job_watchdog.py", "--steps", "5", "--timeout", "10"], ctx.ranks,
                env={"TORCH_NCCL_ASYNC_ERROR_HANDLING": "1", "TORCH_NCCL_DUMP_ON_TIMEOUT": "0"})
    codes = job.wait(150)
    g.expect(all(c != 0 for c in codes), "ranks exited %s: the watchdog did not end the job" % codes)
    truth = job.truth(0)
    evidence = []
    for ledger in g.ledgers(ctx, job.ledgers):
        aborts = [r for r in ledger["records"] if r["op"] == "comm_abort"]
        aborted = [c for c in ledger["communicators"] if c["state"] == "aborted" or c["async_error"] != 0]
        g.expect(aborts or aborted or ledger["first_error"], "rank %d's ledger has no abort and no NCCL error" % ledger["process"]["rank"])
        evidence.append({"rank": ledger["process"]["rank"], "comm_abort_records": len(aborts),
                         "comm_states": [c["state"] for c in ledger["communicators"]], "first_error": ledger["first_error"]})
    verdict = g.report(ctx, job.ledgers)["verdict"]
    summary = verdict["summary"]
    g.expect(verdict["kind"] != "healthy", "the report calls an aborted job healthy: %s" % summary)
    g.expect("abort" in summary.lower(), "the verdict does not say the job was aborted: %s" % summary)
    for part in ("all_reduce #%d" % truth["hung_step"], "%s:%d" % (truth["file"], truth["line"]), "iteration %d" % truth["hung_step"]):
        g.expect(part in summary, "the verdict does not name %s: %s" % (part, summary))
    return "watchdog (timeout %g s) ended the ranks with %s; report: %s" % (truth["timeout"], codes, summary), {
        "exit_codes": codes, "ledgers": evidence, "verdict": verdict}


if __name__ == "__main__":
    sys.exit(g.main("watchdog_abort", on_gpu, skip_rehearsal="needs PyTorch's NCCL backend and watchdog on a GPU"))
