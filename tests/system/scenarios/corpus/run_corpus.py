"""Runs corpus jobs (tests/system/scenarios/corpus/jobs) on the NCCL stand-in with the shim preloaded,
waits for each to hang or pause (or end), runs `hangshim report --json` on its ledgers and scores
four facts against the truth the job wrote itself:

  culprits   the verdict's culprits are the truth's (a healthy job: no problem, no culprits);
  line       the headline (verdict.summary) names the truth's loop line as FILE:LINE (healthy:
             the headline raises no alarm);
  iteration  the headline says "iteration N" for that line (healthy: no alarm);
  cause      the verdict kind is the truth's (healthy: no problem, whatever the pause).

Besides the four facts, a hang's verdict must say which evidence decided it (verdict.why, not
empty): a job without it fails too, though its facts are scored as they are.

Jobs run concurrently (--parallel). A job inspected during a pause is then left to finish: it
must end by itself, or the corpus itself is wrong. Exit status 1 when any fact is missed.

    run_corpus.py --hangshim CLI --shim LIB --fakenccl DIR [--python PY] [--style S ...]
                  [--job NAME ...] [--parallel N] [--json FILE] [--markdown FILE]
"""

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
JOBS = os.path.join(HERE, "jobs")
SCENARIOS = os.path.dirname(HERE)
# Library frames: the stand-ins of torch (ncclpy) and of the frameworks (site-packages).
LIBRARY_PATHS = "/ncclpy.py:/scenario_lib.py:/corpus_lib.py:/site-packages/"

# How each job is run: ranks, and the stall limit its shape allows. "fixed": a 2 s limit, the job
# inspected 3 s after its last progress (cheap); "learned": the shim's default learned limits
# (every pause case keeps them: a pause must never read as a hang under the defaults).
SETTINGS = {
    "plain_trainer_uneven_more": (3, "fixed"),
    "plain_extra_rank0": (4, "fixed"),
    "plain_swapped_order": (3, "fixed"),
    "plain_stuck_closure": (3, "fixed"),
    "plain_stats_dict": (3, "fixed"),
    "plain_os_exit": (3, "fixed"),
    "plain_healthy_exit": (3, "fixed"),
    "plain_grad_accum": (3, "fixed"),
    "plain_decorated_barrier": (3, "fixed"),
    "plain_checkpoint_pause": (3, "learned"),
    "plain_epoch_uneven": (3, "fixed"),
    "lightning_log_extra": (3, "fixed"),
    "lightning_uneven_fewer": (3, "fixed"),
    "lightning_barrier_skip": (3, "fixed"),
    "lightning_pause": (3, "learned"),
    "lightning_crash": (3, "fixed"),
    "lightning_generator_stuck": (3, "fixed"),
    "accelerate_broadcast_swap": (3, "fixed"),
    "accelerate_gather_uneven": (4, "fixed"),
    "accelerate_wait_skip": (3, "fixed"),
    "accelerate_fp16_one_rank": (3, "fixed"),
    "accelerate_pause": (3, "learned"),
    "accelerate_tie_extra": (4, "fixed"),
    "deepspeed_uneven_branch": (3, "fixed"),
    "deepspeed_stuck_body": (4, "fixed"),
    "deepspeed_extra_scalar": (3, "fixed"),
    "deepspeed_grad_accum_fewer": (3, "fixed"),
    "deepspeed_crash": (3, "fixed"),
    "deepspeed_while_stuck": (3, "fixed"),
    "megatron_tp_stuck": (4, "fixed"),
    "megatron_subgroup_skip": (4, "fixed"),
    "megatron_extra_dp": (4, "fixed"),
    "megatron_count_mismatch": (3, "fixed"),
    "vllm_broadcast_root": (3, "fixed"),
    "vllm_pause": (3, "learned"),
    "hf_callback_extra": (3, "fixed"),
    "hf_callback_stuck": (3, "fixed"),
    "hf_callback_uneven": (3, "fixed"),
    "hf_pause": (3, "learned"),
}
STYLES = ("plain", "lightning", "accelerate", "deepspeed", "megatron", "vllm", "hf")
FACTS = ("culprits", "line", "iteration", "cause")


def style_of(name):
    return name.split("_", 1)[0]


class Job(object):
    def __init__(self, args, name):
        self.args, self.name = args, name
        self.ranks, self.limits = SETTINGS[name]
        self.dir = tempfile.mkdtemp(prefix="hangshim-corpus-%s-" % name)
        self.ledgers = os.path.join(self.dir, "ledgers")
        os.mkdir(self.ledgers, 0o700)
        self.pids = []

    def env(self):
        env = dict(os.environ)
        for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LD_PRELOAD", "HANGSHIM_DIR", "HANGSHIM_STALL_SECONDS"):
            env.pop(k, None)
        env["LD_LIBRARY_PATH"] = self.args.fakenccl + os.pathsep + env.get("LD_LIBRARY_PATH", "")
        env["HANGSHIM_LIBRARY_PATHS"] = LIBRARY_PATHS
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        return env

    def launch(self):
        """Runs the job until it hangs, pauses or ends; returns (truth, status)."""
        truth_path, status_path = os.path.join(self.dir, "truth.json"), os.path.join(self.dir, "status.json")
        extra = ["HANGSHIM_DIR=" + self.ledgers, "HANGSHIM_POLL_MS=20", "HANGSHIM_LIBRARY_PATHS=" + LIBRARY_PATHS,
                 "LD_PRELOAD=" + self.args.shim]
        if self.limits == "fixed":
            extra.append("HANGSHIM_STALL_SECONDS=2")
        # A paused job (the learned limits) is read 1 s into its pause: its 6 s pause meets the
        # learned limit's 6 s floor, so the earlier the look, the more room a loaded machine has
        # between the look and the limit (a look past it would rightly say HANG).
        hang_after = "3" if self.limits == "fixed" else "1"
        command = [self.args.python, os.path.join(SCENARIOS, "launch.py"), "-n", str(self.ranks), "--timeout", "90",
                   "--hang-after", hang_after, "--keep-hung", "--quiet", "--truth", truth_path, "--status", status_path,
                   "--workdir", os.path.join(self.dir, "work")]
        for kv in extra:
            command += ["--env", kv]
        command += ["--", self.args.python, os.path.join(JOBS, self.name + ".py")]
        proc = subprocess.run(command, env=self.env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, timeout=150)
        if not os.path.exists(status_path) or not os.path.exists(truth_path):
            raise RuntimeError("%s: launch.py wrote no status or truth:\n%s" % (self.name, proc.stdout[-3000:]))
        with open(status_path) as f:
            status = json.load(f)
        self.pids = [r["pid"] for r in status["ranks"] if r["running"]]
        with open(truth_path) as f:
            truth = json.load(f)
        return truth, status

    def report(self):
        env = self.env()
        p = subprocess.run([self.args.hangshim, "report", "--json", self.ledgers], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, timeout=60)
        if p.returncode != 0:
            raise RuntimeError("%s: hangshim report --json: exit %d: %s" % (self.name, p.returncode, p.stderr.strip()))
        return json.loads(p.stdout)

    def wait_finished(self, seconds):
        """Whether every kept rank ended by itself within `seconds`."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            if not any(os.path.exists("/proc/%d" % pid) and not zombie(pid) for pid in self.pids):
                return True
            time.sleep(0.2)
        return False

    def cleanup(self, keep):
        for pid in self.pids:
            try:
                os.killpg(pid, signal.SIGKILL)  # each rank leads its own process group
            except OSError:
                pass
        if not keep:
            shutil.rmtree(self.dir, ignore_errors=True)


def zombie(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return False


def score(truth, report):
    """{fact: (ok, why)} for the four facts."""
    v = report["verdict"]
    summary = v.get("summary", "")
    got = sorted(v.get("culprits", [])) if v.get("problem") else []
    facts = {}
    if not truth["hang"]:
        alarm = v.get("problem") or summary.startswith("HANG")
        facts["culprits"] = (not got, "culprits %s" % got)
        facts["line"] = (not alarm, "headline: %s" % summary)
        facts["iteration"] = (not alarm, "headline: %s" % summary)
        facts["cause"] = (not v.get("problem"), "verdict %s%s" % (v["kind"], " (in flight)" if v.get("in_flight") else ""))
        return facts
    want = sorted(truth["culprits"])
    if truth.get("ambiguous"):
        facts["culprits"] = (v.get("ambiguous") and got == want, "culprits %s ambiguous=%s" % (got, v.get("ambiguous")))
    else:
        facts["culprits"] = (got == want, "culprits %s, truth %s" % (got, want))
    line = truth["line"]
    where = "%s:%d" % (os.path.basename(line["file"]), line["line"])
    facts["line"] = (where in summary, "headline names %s? %s" % (where, summary))
    it = re.search(r"\biteration %d\b" % truth["iteration"], summary) is not None
    facts["iteration"] = (it, "headline says iteration %d? %s" % (truth["iteration"], summary))
    facts["cause"] = (v["kind"] == truth["kind"], "verdict %s, truth %s" % (v["kind"], truth["kind"]))
    return facts


def run_job(args, name):
    job = Job(args, name)
    keep = False
    started = time.time()
    try:
        truth, status = job.launch()
        if truth["hang"] and status["state"] != "hung":
            raise RuntimeError("%s: the job did not hang (state %s)" % (name, status["state"]))
        report = job.report()
        facts = score(truth, report)
        if truth.get("pause") and not job.wait_finished(truth["pause"] + 20):
            facts["cause"] = (False, "the paused job never finished: the corpus job is wrong")
        why = report["verdict"].get("why", "") if report["verdict"].get("problem") else "(no problem)"
        keep = (not all(ok for ok, _ in facts.values()) or not why) and args.keep_failed
        return {"job": name, "evidence": why, "style": style_of(name), "ranks": job.ranks, "limits": job.limits, "kind": truth["kind"],
                "facts": {k: ok for k, (ok, _) in facts.items()}, "why": {k: why for k, (ok, why) in facts.items()},
                "seconds": round(time.time() - started, 1), "dir": job.dir if keep else None}
    except Exception as e:  # a job that could not be run or read counts as four misses
        keep = args.keep_failed
        return {"job": name, "evidence": "", "style": style_of(name), "ranks": job.ranks, "limits": job.limits, "kind": "?",
                "facts": {k: False for k in FACTS}, "why": {k: str(e) for k in FACTS},
                "seconds": round(time.time() - started, 1), "dir": job.dir if keep else None}
    finally:
        job.cleanup(keep)


def markdown(results):
    lines = ["| job | style | ranks | limits | truth | culprits | line | iteration | cause |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        marks = ["yes" if r["facts"][f] else "**no**" for f in FACTS]
        lines.append("| `%s` | %s | %d | %s | %s | %s |" % (r["job"], r["style"], r["ranks"], r["limits"], r["kind"],
                                                          " | ".join(marks)))
    return "\n".join(lines) + "\n"


def totals(results):
    per_fact = {f: sum(1 for r in results if r["facts"][f]) for f in FACTS}
    whole = sum(1 for r in results if all(r["facts"].values()))
    return per_fact, whole


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hangshim", required=True)
    parser.add_argument("--shim", required=True)
    parser.add_argument("--fakenccl", required=True)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--style", action="append", default=[], choices=STYLES)
    parser.add_argument("--job", action="append", default=[])
    parser.add_argument("--parallel", type=int, default=3)
    parser.add_argument("--json", default="")
    parser.add_argument("--markdown", default="")
    parser.add_argument("--keep-failed", action="store_true", help="keep a missed job's ledgers and truth")
    args = parser.parse_args()
    names = [n for n in SETTINGS if (not args.style or style_of(n) in args.style) and (not args.job or n in args.job)]
    unknown = [j for j in args.job if j not in SETTINGS]
    on_disk = sorted(f[:-3] for f in os.listdir(JOBS) if f.endswith(".py") and f[:-3] != "corpus_lib")
    unlisted = [n for n in on_disk if n not in SETTINGS]
    if unknown or unlisted or not names:
        print("unknown jobs %s; jobs without settings %s; selected %d" % (unknown, unlisted, len(names)))
        return 2
    started = time.time()
    # The paused jobs first: they take longest.
    names.sort(key=lambda n: SETTINGS[n][1] != "learned")
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.parallel)) as pool:
        results = list(pool.map(lambda n: run_job(args, n), names))
    results.sort(key=lambda r: (STYLES.index(r["style"]), r["job"]))
    for r in results:
        missed = [f for f in FACTS if not r["facts"][f]]
        if not r["evidence"]:
            print("MISS %s: the verdict does not say which evidence decided it (verdict.why is empty)" % r["job"])
        print("%s %s (%d ranks, %s limits, %.1f s)%s" % ("ok  " if not missed else "MISS", r["job"], r["ranks"], r["limits"],
                                                        r["seconds"], "" if r["dir"] is None else " kept in " + r["dir"]))
        for f in missed:
            print("     %s: %s" % (f, r["why"][f]))
    per_fact, whole = totals(results)
    n = len(results)
    print("facts: %d of %d (%s); jobs fully right: %d of %d; %.0f s" % (
        sum(per_fact.values()), 4 * n, ", ".join("%s %d/%d" % (f, per_fact[f], n) for f in FACTS), whole, n,
        time.time() - started))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(results))
    return 0 if whole == n and all(r["evidence"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
