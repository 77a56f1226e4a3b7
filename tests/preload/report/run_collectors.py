"""The multi-node collectors (scripts/hang-dump-slurm, scripts/hang-dump-pdsh) with srun, pdsh
and ssh replaced by local stand-ins (fake_cluster/) that run the command once per fake node,
each node with its own ledger directory: a synthetic 8-rank job over 2 nodes (rank 4 stuck
outside NCCL) must come back as one verdict naming rank 4, by every route; a node without
ledgers is reported, not fatal.

    run_collectors.py --hangshim CLI --fixture REPORT_FIXTURE --scripts DIR
"""

import json
import os
import subprocess
import sys

from report_test_lib import HERE, expect, run_checks
from driver import required_args  # report_test_lib puts tests/common on the path

VERDICT = "HANG: rank 4 never issued all_reduce #50 on comm world (8 ranks)"


def main():
    args = required_args("--hangshim", "--fixture", "--scripts")

    def body(work):
        nodes = os.path.join(work, "nodes")
        os.mkdir(nodes)
        made = subprocess.run([args.fixture, "job", nodes, "--ranks", "8", "--nodes", "2", "--collectives", "50",
                               "--slurm-job", "4242"])
        expect(made.returncode == 0, "report_fixture failed")
        env = dict(os.environ)
        env["PATH"] = os.path.join(HERE, "fake_cluster") + os.pathsep + env["PATH"]
        env["FAKE_CLUSTER_NODES"] = nodes
        env["FAKE_CLUSTER_LOG"] = os.path.join(work, "calls.log")
        env.pop("SLURM_JOB_ID", None)
        env.pop("HANGSHIM_DIR", None)
        slurm = os.path.join(args.scripts, "hang-dump-slurm")
        pdsh = os.path.join(args.scripts, "hang-dump-pdsh")

        def collect(name, command, want_exports=2):
            out = os.path.join(work, name)
            cut = command.index("--") if "--" in command else len(command)
            command = command[:cut] + ["--out", out, "--hangshim", args.hangshim] + command[cut:]
            p = subprocess.run(command, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
            exports = sorted(n for n in os.listdir(out) if n.endswith(".json")) if os.path.isdir(out) else []
            expect(len(exports) == want_exports, "%s: exports %s\n%s" % (name, exports, p.stderr))
            return p, exports

        for name, command in (("slurm", [slurm, "--jobid", "4242", "--nodes", "2"]),
                              ("pdsh", [pdsh, "-w", "node0,node1"]),
                              ("ssh", [pdsh, "--ssh", "-w", "node0,node1"])):
            p, exports = collect(name, command)
            expect(p.returncode == 0, "%s: exit %d: %s" % (name, p.returncode, p.stderr))
            expect(exports == ["node0.json", "node1.json"], "%s: exports named %s" % (name, exports))
            first = p.stdout.splitlines()[0] if p.stdout else ""
            expect(first.startswith(VERDICT), "%s: verdict %s\n%s" % (name, first, p.stderr))

        with open(os.path.join(work, "calls.log")) as f:
            calls = f.read()
        expect("--overlap" in calls and "--gres=gpu:0" in calls and "--jobid=4242" in calls and
               "--ntasks-per-node=1" in calls, "srun was called without the flags that keep it off the GPUs:\n" + calls)

        hostfile = os.path.join(work, "hostfile")
        with open(hostfile, "w") as f:
            f.write("# the job's nodes\nnode0 slots=4\nnode1 slots=4\n")
        p, _ = collect("ssh-hostfile", [pdsh, "--ssh", "-w", "@" + hostfile, "--", "--json"])
        verdict = json.loads(p.stdout)["verdict"]
        expect(verdict["culprits"] == [4] and verdict["kind"] == "stuck_outside_nccl", "report --json: %s" % verdict)

        # A third node with no ledger directory: its export says so, the report goes on.
        p, _ = collect("missing-node", [slurm, "--jobid", "4242", "--nodes", "3"], want_exports=3)
        expect(p.returncode == 0 and p.stdout.startswith(VERDICT), "with a bad node: %d %s" % (p.returncode, p.stdout[:300]))
        expect("on node2" in p.stderr or "node2" in p.stderr, "the empty node is not mentioned:\n%s" % p.stderr)

        for script in (slurm, pdsh):
            h = subprocess.run([script, "--help"], stdout=subprocess.PIPE, universal_newlines=True)
            expect(h.returncode == 0 and "usage:" in h.stdout, "%s --help" % script)
            bad = subprocess.run([script, "--bogus"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
            expect(bad.returncode == 2, "%s --bogus gave %d" % (script, bad.returncode))
        nojob = subprocess.run([slurm, "--nodes", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                               universal_newlines=True)
        expect(nojob.returncode == 2 and "--jobid" in nojob.stderr, "no job id: %d %s" % (nojob.returncode, nojob.stderr))

    return run_checks("collectors", "hangshim-collect-", body, "srun, pdsh and ssh routes give the verdict")


if __name__ == "__main__":
    sys.exit(main())
