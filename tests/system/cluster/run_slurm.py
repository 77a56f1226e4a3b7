"""scripts/hang-dump-slurm against a real single-node SLURM (Debian's slurm-wlm and munge): the
test starts munged (its own key and socket), slurmctld -D and slurmd -D with a slurm.conf it
writes (state, spool and logs in a temporary directory, free ports, SlurmUser=root,
proctrack/linuxproc, task/none, no cgroups, no accounting) and tears all of it down by pid at
the end, even on failure. Two jobs are submitted with sbatch, each running a hang scenario under
`hangshim run --dir LEDGERS` (both into the same directory) through tests/system/scenarios/launch.py
over the NCCL stand-in; they hang and stay running. Then, checked against the scenarios' own
truth and what squeue says:

  * by id, as the README shows it (`hang-dump-slurm --jobid N`, no --dir, hangshim on PATH):
    each job's verdict is its own, although the other hung job's ledgers share the directory
    and the caller's default ledger directory is another one; the same with --dir naming the
    shared directory;
  * from inside the job (srun --overlap --jobid N, two tasks: SLURM_JOB_ID set, SLURM_NTASKS=2
    inherited): one export per node, the job's verdict;
  * an ended job, a wrong id, no hangshim on the nodes' PATH, the controller stopped: exit 1,
    one line of the script's own naming the problem and the fix, no directory left behind.

Skipped (exit 77) when not root, a package is missing or a daemon does not start.

    run_slurm.py --scripts DIR --hangshim CLI --shim LIB --fakenccl DIR [--pythonpath DIR] [--python PY]
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from cluster_lib import (Daemons, Failure, Skip, expect, free_ports, main_with_skip, need_programs, need_root,
                         one_line_of_its_own, program, run, tail, wait_until)
from driver import parser_requiring
from report_test_lib import LIBRARY_PATHS, SCENARIOS
from run_report_case import Checker

SLURM_CONF = """ClusterName=hangshimtest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={work}/munge/socket
StateSaveLocation={work}/state
SlurmdSpoolDir={work}/spool
SlurmctldPidFile={work}/slurmctld.pid
SlurmdPidFile={work}/slurmd.pid
SlurmctldLogFile={work}/slurmctld.log
SlurmdLogFile={work}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SlurmdParameters=config_overrides
MessageTimeout=5
MinJobAge=600
NodeName={host} NodeAddr=127.0.0.1 CPUs=16 State=UNKNOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""

JOB = """#!/bin/sh
# A hang scenario in a SLURM job: launch.py starts the ranks under `hangshim run` and returns
# once they hang (leaving them running); the job then stays until it is cancelled.
{python} {launch} -n 2 --timeout 120 --hang-after 3 --keep-hung --quiet --truth {work}/truth.$SLURM_JOB_ID.json \\
  --status {work}/status.$SLURM_JOB_ID.json --workdir {work}/rendezvous.$SLURM_JOB_ID \\
  --env HANGSHIM_POLL_MS=20 --env HANGSHIM_STALL_SECONDS=2 --env HANGSHIM_LIBRARY_PATHS={library_paths} {pythonpath} \\
  -- {hangshim} run --quiet --dir {ledgers} -- {python} {scenario}
echo $? >{work}/launched.$SLURM_JOB_ID
exec sleep 600
"""


class Cluster(object):
    def __init__(self, args, work):
        self.args = args
        self.work = work
        self.daemons = Daemons(work)
        self.host = socket.gethostname().split(".")[0]
        self.conf = os.path.join(work, "slurm.conf")
        self.env = dict(os.environ)
        for k in list(self.env):
            if k.startswith(("SLURM_", "SRUN_", "SBATCH_", "SQUEUE_")) or k in ("HANGSHIM_DIR", "LD_PRELOAD", "RANK"):
                del self.env[k]
        self.env["SLURM_CONF"] = self.conf
        self.env["LD_LIBRARY_PATH"] = args.fakenccl + os.pathsep + self.env.get("LD_LIBRARY_PATH", "")
        self.env["PYTHONDONTWRITEBYTECODE"] = "1"
        # The caller's default ledger directory is not the jobs' (theirs is given to hangshim run).
        self.env["HANGSHIM_DIR"] = os.path.join(work, "callers-ledgers")
        os.mkdir(self.env["HANGSHIM_DIR"], 0o700)

    def start(self):
        munge = os.path.join(self.work, "munge")
        os.mkdir(munge, 0o700)
        for d in ("state", "spool"):
            os.mkdir(os.path.join(self.work, d), 0o755)
        key = os.path.join(munge, "key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o600)
        socket_path = os.path.join(munge, "socket")
        self.daemons.start("munged", [program("munged"), "--foreground", "--force", "--key-file=" + key,
                                      "--socket=" + socket_path, "--pid-file=" + os.path.join(munge, "pid"),
                                      "--log-file=" + os.path.join(munge, "log"),
                                      "--seed-file=" + os.path.join(munge, "seed")])

        def munge_works():
            if not self.daemons.running("munged"):
                raise Skip("munged exited: " + tail(os.path.join(self.work, "munged.out")))
            cred = subprocess.run(["munge", "-n", "-S", socket_path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            if cred.returncode != 0:
                return False
            p = subprocess.run(["unmunge", "-S", socket_path], input=cred.stdout, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
            return p.returncode == 0
        wait_until("munged", munge_works, 20, os.path.join(self.work, "munged.out"))

        ctld_port, slurmd_port = free_ports(2)
        with open(self.conf, "w") as f:
            f.write(SLURM_CONF.format(host=self.host, ctld_port=ctld_port, slurmd_port=slurmd_port, work=self.work))
        self.start_controller()
        self.daemons.start("slurmd", [program("slurmd"), "-D", "-f", self.conf], env=self.env)

        def node_idle():
            for name in ("slurmctld", "slurmd"):
                if not self.daemons.running(name):
                    raise Skip("%s exited:\n%s" % (name, tail(os.path.join(self.work, name + ".log"))))
            p = subprocess.run(["sinfo", "-h", "-o", "%T"], env=self.env, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, universal_newlines=True)
            return p.returncode == 0 and p.stdout.strip() == "idle"
        wait_until("the SLURM node", node_idle, 40, os.path.join(self.work, "slurmd.log"))

    def start_controller(self):
        self.daemons.start("slurmctld", [program("slurmctld"), "-D", "-f", self.conf], env=self.env)

    def squeue(self, job, fmt):
        code, out, err, _ = run(["squeue", "-h", "-t", "all", "-j", str(job), "-o", fmt], env=self.env)
        return out.strip() if code == 0 else None

    def submit(self, scenario, ledgers):
        script = os.path.join(self.work, "job-%s.sh" % os.path.basename(scenario))
        pythonpath = "--env PYTHONPATH=" + self.args.pythonpath if self.args.pythonpath else ""
        with open(script, "w") as f:
            f.write(JOB.format(python=self.args.python, launch=os.path.join(SCENARIOS, "launch.py"), work=self.work,
                               library_paths=LIBRARY_PATHS, pythonpath=pythonpath, hangshim=self.args.hangshim,
                               ledgers=ledgers, scenario=os.path.join(SCENARIOS, scenario)))
        os.chmod(script, 0o755)
        code, out, err, _ = run(["sbatch", "--parsable", "-n", "2", "-J", scenario, "-D", self.work,
                                 "-o", os.path.join(self.work, "job-%j.out"), script], env=self.env)
        expect(code == 0, "sbatch failed (%d): %s" % (code, err))
        return out.strip().split(";")[0]

    def wait_hung(self, job):
        """The job's truth once launch.py saw it hang (its ranks still running)."""
        launched = os.path.join(self.work, "launched.%s" % job)
        deadline = time.monotonic() + 90
        while not os.path.exists(launched):
            state = self.squeue(job, "%T")
            expect(state in ("PENDING", "CONFIGURING", "RUNNING"), "job %s is %s before it hung:\n%s" %
                   (job, state, tail(os.path.join(self.work, "job-%s.out" % job))))
            expect(time.monotonic() < deadline, "job %s did not hang within 90 s" % job)
            time.sleep(0.2)
        with open(os.path.join(self.work, "status.%s.json" % job)) as f:
            status = json.load(f)
        self.daemons.extra_pids += [r["pid"] for r in status["ranks"] if r["running"]]
        expect(status["state"] == "hung", "job %s's scenario ended %s, not hung" % (job, status["state"]))
        with open(os.path.join(self.work, "truth.%s.json" % job)) as f:
            return json.load(f)

    def stop(self):
        """Every job cancelled, every process of this cluster killed by pid (those whose environment
        names this slurm.conf: slurmstepd, the jobs' processes), then the daemons."""
        if self.daemons.running("slurmctld"):
            subprocess.run(["scancel", "--full", "-u", "root"], env=self.env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        needle = ("SLURM_CONF=" + self.conf).encode()
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) == os.getpid():
                continue
            try:
                with open("/proc/%s/environ" % name, "rb") as f:
                    if needle in f.read().split(b"\0") and int(name) not in [p.pid for p in self.daemons.procs.values()]:
                        self.daemons.extra_pids.append(int(name))
            except OSError:
                pass
        self.daemons.stop()


def main():
    p = parser_requiring("--scripts", "--hangshim", "--shim", "--fakenccl")
    p.add_argument("--pythonpath", default="")
    p.add_argument("--python", default=sys.executable)
    args = p.parse_args()
    args.hangshim = os.path.realpath(args.hangshim)
    args.fakenccl = os.path.realpath(args.fakenccl)
    script = os.path.join(os.path.realpath(args.scripts), "hang-dump-slurm")
    failures = []

    def body():
        need_root("the SLURM test")
        need_programs("munged", "slurmctld", "slurmd", "sbatch", "srun", "squeue", "scancel", "sinfo", "munge", "unmunge")
        work = tempfile.mkdtemp(prefix="hangshim-slurm-")
        os.chmod(work, 0o755)
        cluster = Cluster(args, work)
        ok = False
        try:
            cluster.start()
            checks(cluster, work, script, failures)
            ok = not failures
        finally:
            cluster.stop()
            if ok:
                shutil.rmtree(work, ignore_errors=True)
            else:
                print("(kept in %s)" % work)
        if failures:
            raise Failure("\n  ".join([""] + failures))

    return main_with_skip("hang-dump-slurm on a real SLURM", body)


def checks(cluster, work, script, failures):
    ledgers = os.path.join(work, "ledgers")
    os.mkdir(ledgers, 0o700)
    jobs = {}
    for scenario in ("barrier_skipped.py", "stuck_dataloader.py"):
        jobs[scenario] = cluster.submit(scenario, ledgers)
    truths = {job: cluster.wait_hung(job) for job in jobs.values()}
    env = dict(cluster.env)
    env["PATH"] = os.path.dirname(args_hangshim(cluster)) + os.pathsep + env["PATH"]
    started = time.monotonic()

    def case(name, fn):
        t = time.monotonic()
        try:
            fn()
            print("  ok   %-28s %5.1f s" % (name, time.monotonic() - t))
        except Failure as e:
            print("  FAIL %-28s %5.1f s" % (name, time.monotonic() - t))
            failures.append("%s: %s" % (name, e))

    def empty_dir(name):
        path = os.path.join(work, name)
        os.mkdir(path)
        return path

    def by_jobid():
        # The README's command, each job in turn: its own verdict, not the other's (both hang,
        # their ledgers share one directory, the newer one is what a plain report would pick).
        for job, truth in truths.items():
            expect(cluster.squeue(job, "%T") == "RUNNING", "job %s is not running" % job)
            cwd = empty_dir("by-id-%s" % job)
            code, out, err, _ = run([script, "--jobid", job, "--", "--json"], env=env, cwd=cwd, timeout=120)
            expect(code == 0, "--jobid %s: exit %d: %s" % (job, code, err))
            try:
                report = json.loads(out)
            except ValueError:
                raise Failure("--jobid %s: not JSON: %s\n%s" % (job, out[:500], err))
            Checker(truth, report).check_verdict(report, "hang-dump-slurm --jobid %s (%s)" % (job, truth["scenario"]))
            node = cluster.squeue(job, "%N")
            dumps = [d for d in os.listdir(cwd) if d.startswith("hang-dump-")]
            expect(len(dumps) == 1 and os.listdir(os.path.join(cwd, dumps[0])) == [node + ".json"],
                   "--jobid %s left %s, not one directory with %s.json" % (job, dumps, node))
            # The directory named: both jobs' ledgers are read, the report is about this job only.
            code, out, err, _ = run([script, "--jobid", job, "--dir", ledgers, "--out", os.path.join(cwd, "dir"),
                                     "--", "--json"], env=env, timeout=120)
            expect(code == 0, "--jobid %s --dir: exit %d: %s" % (job, code, err))
            report = json.loads(out)
            Checker(truth, report).check_verdict(report, "hang-dump-slurm --jobid %s --dir (%s)" % (job, truth["scenario"]))
        job, truth = next(iter(truths.items()))
        code, out, err, _ = run([script, "--jobid", job, "--out", os.path.join(work, "text-%s" % job)], env=env)
        expect(code == 0, "--jobid %s (text): exit %d: %s" % (job, code, err))
        text_checker = Checker.__new__(Checker)  # the text checks need only the truth
        text_checker.truth = truth
        text_checker.check_text(out)

    def inside_job():
        job = jobs["barrier_skipped.py"]
        counter = os.path.join(work, "exports-run")
        seen_env = os.path.join(work, "inside-env")
        out_dir = os.path.join(work, "inside-out")
        inner = ('env >%s; exec %s --out %s --init "echo \\$SLURMD_NODENAME >>%s" -- --json' %
                 (seen_env, script, out_dir, counter))
        code, out, err, _ = run(["srun", "--jobid", job, "--overlap", "-n", "2", "sh", "-c",
                                 'if [ "$SLURM_PROCID" = 0 ]; then %s; fi' % inner], env=env, timeout=120)
        with open(seen_env) as f:
            inherited = dict(l.split("=", 1) for l in f.read().splitlines() if "=" in l)
        expect(inherited.get("SLURM_JOB_ID") == job and inherited.get("SLURM_NTASKS") == "2",
               "the step did not run with the job's SLURM_JOB_ID and SLURM_NTASKS=2: %s" %
               {k: v for k, v in inherited.items() if k.startswith("SLURM_")})
        expect(code == 0, "inside the job: exit %d: %s" % (code, err))
        with open(counter) as f:
            runs = f.read().split()
        nodes = int(cluster.squeue(job, "%D"))
        expect(len(runs) == nodes, "inside the job: %d exports started on %d node(s) (%s)" % (len(runs), nodes, runs))
        report = json.loads(out)
        Checker(truths[job], report).check_verdict(report, "hang-dump-slurm inside job %s" % job)

    def refused(label, argv, words, run_env=env):
        """A failure: one line of the script's own; neither --out nor the default directory left."""
        cwd = empty_dir("cwd-" + label)
        out_dir = os.path.join(work, "out-" + label)
        code, out, err, seconds = run([script] + argv + ["--out", out_dir], env=run_env, cwd=cwd, timeout=120)
        line = one_line_of_its_own("hang-dump-slurm", code, err, words, label)
        expect(code == 1, "%s: exit %d, not 1: %s" % (label, code, line))
        expect(not os.path.exists(out_dir), "%s: %s was left behind" % (label, out_dir))
        code, out, err, _ = run([script] + argv, env=run_env, cwd=cwd, timeout=120)
        one_line_of_its_own("hang-dump-slurm", code, err, words, label + " (default --out)")
        expect(not os.listdir(cwd), "%s: left %s in the working directory" % (label, os.listdir(cwd)))
        return line

    def ended_job():
        code, out, err, _ = run(["sbatch", "--parsable", "-D", work, "-o", "/dev/null", "--wrap", "true"], env=env)
        expect(code == 0, "sbatch: %s" % err)
        job = out.strip().split(";")[0]
        deadline = time.monotonic() + 30
        while cluster.squeue(job, "%T") != "COMPLETED":
            expect(time.monotonic() < deadline, "job %s did not complete: %s" % (job, cluster.squeue(job, "%T")))
            time.sleep(0.2)
        nodelist = cluster.squeue(job, "%N")
        refused("ended", ["--jobid", job], ["job %s" % job, "ended", "hang-dump-pdsh -w %s" % nodelist])

    def wrong_id():
        known = [int(j) for j in jobs.values()]
        wrong = str(max(known) + 4711)
        expect(cluster.squeue(wrong, "%T") is None, "squeue knows job %s" % wrong)
        refused("wrong-id", ["--jobid", wrong], ["no job %s" % wrong])

    def no_hangshim():
        plain = dict(env)
        plain["PATH"] = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"
        if shutil.which("hangshim", path=plain["PATH"]):
            raise Failure("a hangshim is installed on the system PATH (%s): cannot test its absence" %
                          shutil.which("hangshim", path=plain["PATH"]))
        refused("no-hangshim", ["--jobid", jobs["barrier_skipped.py"]], ["--hangshim PATH", "not on the PATH"],
                run_env=plain)

    def controller_down():
        cluster.daemons.stop_one("slurmctld")
        try:
            refused("no-controller", ["--jobid", jobs["barrier_skipped.py"], "--timeout", "30"], ["controller"])
        finally:
            cluster.start_controller()

    case("by --jobid, two hung jobs", by_jobid)
    case("inside the job", inside_job)
    case("an ended job", ended_job)
    case("a wrong job id", wrong_id)
    case("no hangshim on PATH", no_hangshim)
    case("controller stopped", controller_down)
    print("  (checks took %.1f s)" % (time.monotonic() - started))


def args_hangshim(cluster):
    return cluster.args.hangshim


if __name__ == "__main__":
    sys.exit(main())
