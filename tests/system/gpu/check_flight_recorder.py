"""Check 4, Flight Recorder both ways: PyTorch's own dumps (TORCH_NCCL_TRACE_BUFFER_SIZE, written
through its API) read by `hangshim report`, and `hangshim export --format flight-recorder`
read by PyTorch's own analyser (torch.distributed.flight_recorder.fr_trace); the verdict is the
same both ways and the same as the ledgers'. Needs PyTorch >= 2.5 with NCCL, so a GPU."""

import os
import subprocess
import sys

import gpu_check as g

ANALYSER = ["-m", "torch.distributed.flight_recorder.fr_trace"]


def analyse(ctx, directory):
    run = subprocess.run([ctx.python] + ANALYSER + [directory, "--prefix", "nccl_trace_rank_"], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, universal_newlines=True, timeout=120)
    g.expect(run.returncode == 0, "PyTorch's analyser failed on %s: %s" % (directory, run.stdout[-400:]))
    return "has errors" not in run.stdout, run.stdout[-2000:]


def on_gpu(ctx):
    probe = subprocess.run([ctx.python, "-c", "import torch.distributed.flight_recorder.fr_trace"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if probe.returncode != 0:
        raise g.Skipped("PyTorch's analyser does not import here (torch >= 2.5 and tabulate): %s" % probe.stdout.strip()[-200:])
    dumps = os.path.join(ctx.directory("flight-recorder"), "torch-dumps")
    os.makedirs(dumps, exist_ok=True)
    job = g.Job(ctx, "flight-recorder", ["job_flight_recorder.py", "--calls", "20", "--dump-dir", dumps], ctx.ranks,
                env={"TORCH_NCCL_TRACE_BUFFER_SIZE": "2000"})
    job.wait_ok(180)
    from_ledgers = g.report(ctx, job.ledgers)
    from_torch = g.report(ctx, dumps)
    g.expect(not from_torch["errors"], "hangshim report could not read PyTorch's dumps: %s" % from_torch["errors"])
    exported = os.path.join(job.dir, "exported")
    code, _, err = g.run_tool([ctx.hangshim, "export", "--format", "flight-recorder", "-o", exported, job.ledgers])
    g.expect(code == 0, "hangshim export --format flight-recorder: exit %d: %s" % (code, err.strip()))
    torch_ok_on_export, export_text = analyse(ctx, exported)
    torch_ok_on_own, own_text = analyse(ctx, dumps)
    kinds = {"ledgers": from_ledgers["verdict"]["kind"], "torch dumps": from_torch["verdict"]["kind"]}
    g.expect(len(set(kinds.values())) == 1, "verdicts differ: %s" % kinds)
    healthy = kinds["ledgers"] == "healthy"
    g.expect(torch_ok_on_export == healthy and torch_ok_on_own == healthy,
             "PyTorch's analyser finds %s on the export and %s on its own dumps; hangshim says %s" % (
                 "no errors" if torch_ok_on_export else "errors", "no errors" if torch_ok_on_own else "errors", kinds["ledgers"]))
    figures = "torch %s: hangshim report on PyTorch's dumps: %s, on the ledgers: %s; fr_trace on the export and on its own dumps: %s" % (
        job.truth(0)["torch"], kinds["torch dumps"], kinds["ledgers"], "no errors" if healthy else "errors")
    return figures, {"verdicts": kinds, "fr_trace_export": export_text, "fr_trace_own": own_text}


if __name__ == "__main__":
    sys.exit(g.main("flight_recorder", on_gpu, skip_rehearsal="needs PyTorch's NCCL backend (>= 2.5) on a GPU"))
