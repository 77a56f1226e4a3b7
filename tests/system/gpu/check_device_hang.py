"""Check 3, a hang on the device: a collective the host issued and the device never completes
(GPU: a spinning kernel ahead of an all_reduce; rehearsal: the stand-in's stream blocked by a
rank that never issues it). The shim's stall line comes within its learned limit (at most 10 s
after the call), and `hangshim report` names the collective, the line and the iteration the job
recorded, and the ledger says the call was issued (returned to the host) but not completed."""

import re
import sys
import time

import gpu_check as g

STEPS = 40  # enough earlier calls from the line for the shim to learn its limit
STALL = r"^hangshim: rank (\d+) \(pid \d+ on [^)]*\) stalled: (.*) \(limit ([0-9.e+]+) s: ([^)]*)\).*$"
MAX_SECONDS = 10.0


def verify(ctx, job, hung_rank, culprit_kind):
    truth = job.wait_for_truth(hung_rank, "issued_at", 120)
    _, stall = job.wait_for_line(hung_rank, STALL, 60)
    seen_after = time.time() - truth["issued_at"]
    m = re.match(STALL, stall)
    limit = float(m.group(3))
    want = "all_reduce #%d" % truth["hung_step"]
    g.expect(want in m.group(2) and "not completed" in m.group(2),
             "the stall line says %r, not that %s was issued and not completed" % (m.group(2), want))
    g.expect(seen_after <= MAX_SECONDS and limit <= MAX_SECONDS,
             "stall line %.1f s after the call (limit %.3g s: %s), more than %g s" % (seen_after, limit, m.group(4), MAX_SECONDS))
    site = "%s:%d" % (truth["file"], truth["line"])
    hung = [r for ledger in g.ledgers(ctx, job.ledgers) if ledger["process"]["rank"] == hung_rank
            for r in g.records(ledger, "all_reduce") if r["seq"] == truth["hung_step"]]
    g.expect(len(hung) == 1, "rank %d's ledger has %d records of %s" % (hung_rank, len(hung), want))
    g.expect(hung[0]["returned_ns"] > 0 and hung[0]["completed_ns"] == 0 and hung[0]["event_tracked"],
             "rank %d's %s: returned_ns %d, completed_ns %d, event_tracked %s: not 'issued, never completed on the device'" % (
                 hung_rank, want, hung[0]["returned_ns"], hung[0]["completed_ns"], hung[0]["event_tracked"]))
    verdict = g.report(ctx, job.ledgers)["verdict"]
    summary = verdict["summary"]
    for part in (want, site, "iteration %d" % truth["hung_step"]):
        g.expect(part in summary, "the verdict does not name %s: %s" % (part, summary))
    g.expect(verdict["kind"] == culprit_kind, "verdict %s, expected %s: %s" % (verdict["kind"], culprit_kind, summary))
    figures = "stall line %.1f s after the call (limit %.3g s, %s); report: %s" % (seen_after, limit, m.group(4), summary)
    return figures, {"stall_line": stall, "seconds": seen_after, "limit": limit, "verdict": verdict}


def on_gpu(ctx):
    job = g.Job(ctx, "device-hang", ["job_device_hang.py", "--steps", str(STEPS)], ctx.ranks)
    try:
        # every rank issued it, no device completed it
        return verify(ctx, job, 0, "transport")
    finally:
        job.kill()


def rehearse(ctx):
    job = g.Job(ctx, "device-hang", ["standin_loop.py", "--steps", str(STEPS), "--hang-at", str(STEPS)], ctx.ranks)
    try:
        # rank 1 never issues it: the report blames rank 1, rank 0's call waits on its stream
        return verify(ctx, job, 0, "stuck_outside_nccl")
    finally:
        job.kill()


if __name__ == "__main__":
    sys.exit(g.main("device_hang", on_gpu, rehearse))
