"""Check 1, training: a training loop under `hangshim run` on the NCCL backend. Every rank's
ledger holds every all_reduce the job issued, at the line the job recorded for it and with its
iteration; completion came from CUDA events; nothing is pending at the end; the report says
the job was healthy. GPU: PyTorch DDP, 200 steps (job_ddp.py). Rehearsal: ncclpy on the stand-in
with a stream, 200 all_reduces (standin_loop.py)."""

import sys

import gpu_check as g

STEPS = 200


def verify(ctx, job, op, site_of, per_step):
    job.wait_ok(180)
    figures = []
    for _, ledger, truth in job.ranked_ledgers(ctx):
        calls = len(g.records(ledger, op))
        per = per_step(truth, calls)
        figures.append(g.check_calls(ledger, op, site_of(truth), truth["steps"] * per, events=True))
    g.expect(len(figures) == job.ranks, "%d ledgers for %d ranks" % (len(figures), job.ranks))
    pending = sum(f["pending"] for f in figures)
    g.expect(pending == 0, "%d calls still pending at the end" % pending)
    verdict = g.report(ctx, job.ledgers)["verdict"]
    g.expect(verdict["kind"] == "healthy", "the report says %s: %s" % (verdict["kind"], verdict["summary"]))
    line = "%d ranks x %d %s at %s:%d, all completed by CUDA events, none pending; report: %s" % (
        job.ranks, figures[0]["calls"], op, site_of(job.truth(0))[0], site_of(job.truth(0))[1], verdict["kind"])
    return line, {"ranks": figures, "verdict": verdict["summary"]}


def on_gpu(ctx):
    job = g.Job(ctx, "training", ["job_ddp.py", "--steps", str(STEPS)], ctx.ranks)

    def per_step(truth, calls):  # DDP issues one all_reduce per bucket and step
        g.expect(calls and calls % truth["steps"] == 0, "%d all_reduces for %d steps: not a whole number of buckets" % (calls, truth["steps"]))
        return calls // truth["steps"]
    return verify(ctx, job, "all_reduce", lambda t: (t["file"], t["backward_line"]), per_step)


def rehearse(ctx):
    job = g.Job(ctx, "training", ["standin_loop.py", "--steps", str(STEPS)], ctx.ranks)
    return verify(ctx, job, "all_reduce", lambda t: (t["file"], t["line"]), lambda truth, calls: 1)


if __name__ == "__main__":
    sys.exit(g.main("training", on_gpu, rehearse))
