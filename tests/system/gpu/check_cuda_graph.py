"""Check 5, CUDA graphs: an all_reduce captured in a graph and replayed 100 times. The ledger
holds the capture (marked graph_captured, at the line the job recorded) and no record per replay
(replays do not call NCCL); the report says it saw a captured call, and raises no false hang:
no stall line during a pause longer than the stall limit, and a healthy verdict. GPU: PyTorch,
torch.cuda.graph (job_cuda_graph.py). Rehearsal: ncclpy on the stand-in, whose driver captures
a stream (standin_graph.py; the captured all_reduce runs once, at capture, and the replays run
nothing, so the replayed values are not checked)."""

import json
import sys

import gpu_check as g

REPLAYS = 100


def verify(ctx, job, values):
    """The ledgers and the report of a finished graph job; `values`: the job checked its numbers
    (on a GPU the replays really run; the stand-in's launches run nothing)."""
    figures = []
    for rank, ledger, truth in job.ranked_ledgers(ctx):
        if values:
            g.expect(truth["value"] == truth["expected"], "rank %d: replays gave %g, expected %g" % (rank, truth["value"], truth["expected"]))
        calls = g.records(ledger, "all_reduce")
        captured = [r for r in calls if r["graph_captured"]]
        g.expect(len(calls) == truth["warmup"] + 1, "rank %d: %d all_reduce records for %d warm-up calls and 1 capture (%d replays)" % (
            rank, len(calls), truth["warmup"], truth["replays"]))
        g.expect(len(captured) == 1, "rank %d: %d records marked graph_captured, the job captured 1" % (rank, len(captured)))
        site = g.user_site(ledger, captured[0]["callsite"])
        g.expect(site == (truth["file"], truth["captured_line"]), "rank %d: the capture is recorded at %s, the job captured at %s:%d" % (
            rank, site, truth["file"], truth["captured_line"]))
        figures.append({"rank": rank, "records": len(calls), "captured": len(captured)})
    g.expect(len(figures) == job.ranks, "%d ledgers for %d ranks" % (len(figures), job.ranks))
    stalls = [line for r in range(job.ranks) for line in job.log(r).splitlines() if " stalled: " in line]
    g.expect(not stalls, "false hang: %s" % stalls[0] if stalls else "")
    rep = g.report(ctx, job.ledgers)
    g.expect(rep["verdict"]["kind"] == "healthy", "the report says %s: %s" % (rep["verdict"]["kind"], rep["verdict"]["summary"]))
    g.expect("graph" in json.dumps(rep).lower(), "the report does not say that it saw a call captured into a CUDA graph "
                                                   "(whose replays it cannot see)")
    truth = job.truth(0)
    return ("%d ranks: 1 captured all_reduce at %s:%d, %d replays unseen by NCCL and the ledger, no stall line, report healthy" % (
        job.ranks, truth["file"], truth["captured_line"], truth["replays"]), {"ranks": figures, "verdict": rep["verdict"]["summary"]})


def on_gpu(ctx):
    job = g.Job(ctx, "cuda-graph", ["job_cuda_graph.py", "--replays", str(REPLAYS), "--pause", "8"], ctx.ranks,
                env={"HANGSHIM_STALL_SECONDS": "4"})
    job.wait_ok(180)
    return verify(ctx, job, values=True)


def rehearse(ctx):
    # A pause of twice the stall limit: a false hang would be reported within it.
    job = g.Job(ctx, "cuda-graph", ["standin_graph.py", "--replays", str(REPLAYS), "--pause", "2"], ctx.ranks,
                env={"HANGSHIM_STALL_SECONDS": "1"})
    job.wait_ok(120)
    return verify(ctx, job, values=False)


if __name__ == "__main__":
    sys.exit(g.main("cuda_graph", on_gpu, rehearse))
