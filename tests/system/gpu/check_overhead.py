"""Check 2, overhead: small all_reduces with and without the shim, the cost per call and the
ratio. A benchmark: it passes when both runs finished and the shim counted every call (the
ledger's per-communicator op count; the ring keeps only the newest calls). GPU: 10 000 calls of
one float32 on NCCL. Rehearsal: 2 000 on the stand-in (whose own cost dominates: the figures
only show that the check works)."""

import sys

import gpu_check as g


def measure(ctx, calls):
    timings = {}
    for shim in (False, True):
        name = "overhead-%s" % ("shim" if shim else "plain")
        job = g.Job(ctx, name, ["job_allreduce_bench.py", "--calls", str(calls)], ctx.ranks, shim=shim)
        job.wait_ok(240, "%s run" % name)
        timings[shim] = max(job.truth(r)["per_call_us"] for r in range(job.ranks))
        if shim:
            for rank, ledger, truth in job.ranked_ledgers(ctx):
                counted = sum(c["op_counts"].get("all_reduce", 0) for c in ledger["communicators"])
                want = calls + truth["warmup"]
                g.expect(counted == want, "rank %d's ledger counted %d all_reduces, the job issued %d" % (
                    rank, counted, want))
    plain, shimmed = timings[False], timings[True]
    figures = "%d all_reduces x %d ranks: %.2f us/call without the shim, %.2f with (+%.2f us, ratio %.3f)" % (
        calls, ctx.ranks, plain, shimmed, shimmed - plain, shimmed / plain)
    return figures, {"calls": calls, "ranks": ctx.ranks, "plain_us": plain, "shim_us": shimmed,
                     "added_us": shimmed - plain, "ratio": shimmed / plain}


if __name__ == "__main__":
    sys.exit(g.main("overhead", lambda ctx: measure(ctx, 10000), lambda ctx: measure(ctx, 2000)))
