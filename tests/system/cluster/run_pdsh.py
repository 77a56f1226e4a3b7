"""scripts/hang-dump-pdsh against real sshd, ssh and pdsh: the test starts sshd on a free
loopback port with a throwaway host key and authorized client key (a temporary directory; the
client side uses an ssh config of its own through an `ssh` wrapper first on PATH, so ~/.ssh is
neither read nor written), and a second sshd whose every session hangs (ForceCommand sleep).
The ssh names node0 and node1 both reach this host and mimic two nodes (each gets its own
HANGSHIM_DIR through SetEnv/AcceptEnv); hangnode is the sshd that hangs; deadnode is a closed
port. A hang scenario runs here with the shim (tests/system/scenarios/launch.py over the NCCL
stand-in, left hung) and its ranks' ledgers are split over the two nodes' directories. Checked
against the scenario's truth, with pdsh and with --ssh:

  * node0,node1: the verdict; "2 of 2 hosts answered"; exports node0.json and node1.json;
  * plus hangnode and deadnode, with --timeout (five times what the two nodes took: ssh is
    slow on a loaded machine): it ends (a run that outlives the limit by 60 s fails), "2 of 4 hosts answered" naming
    hangnode (no answer within the limit) and deadnode, the verdict;
  * deadnode alone: exit 1, one line of the script's own, no directory left behind.

Skipped (exit 77) when not root, a package is missing or sshd does not start.

    run_pdsh.py --scripts DIR --hangshim CLI --shim LIB --fakenccl DIR [--pythonpath DIR] [--python PY]
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from cluster_lib import (Daemons, Failure, Skip, expect, free_ports, main_with_skip, need_programs, need_root,
                         one_line_of_its_own, program, run, tail, wait_until)
from report_test_lib import Workspace, common_args
from run_report_case import Checker

SSHD_CONFIG = """ListenAddress 127.0.0.1:{port}
HostKey {work}/host_key
PidFile {work}/sshd-{name}.pid
AuthorizedKeysFile {work}/authorized_keys
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AcceptEnv HANGSHIM_DIR
LogLevel ERROR
{extra}
"""

SSH_CONFIG = """Host node0
  HostName 127.0.0.1
  Port {port}
  SetEnv HANGSHIM_DIR={work}/node0
Host node1
  HostName localhost
  Port {port}
  SetEnv HANGSHIM_DIR={work}/node1
Host hangnode
  HostName 127.0.0.1
  Port {hang_port}
Host deadnode
  HostName 127.0.0.1
  Port {dead_port}
Host *
  User root
  IdentityFile {work}/client_key
  IdentitiesOnly yes
  UserKnownHostsFile {work}/known_hosts
  StrictHostKeyChecking no
  BatchMode yes
  LogLevel ERROR
"""


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--scripts", required=True)
    common_args(p)
    args = p.parse_args()
    args.hangshim = os.path.realpath(args.hangshim)
    args.shim = os.path.realpath(args.shim)
    args.fakenccl = os.path.realpath(args.fakenccl)
    script = os.path.join(os.path.realpath(args.scripts), "hang-dump-pdsh")
    failures = []

    def body():
        need_root("the pdsh test")
        need_programs("sshd", "ssh", "ssh-keygen", "pdsh")
        code, out, _, _ = run(["pdsh", "-L"])
        if "rcmd/ssh" not in out or "rcmd/exec" not in out:
            raise Skip("pdsh has no ssh or exec rcmd module (pdsh -L)")
        work = tempfile.mkdtemp(prefix="hangshim-pdsh-")
        os.chmod(work, 0o755)
        daemons = Daemons(work)
        ws = Workspace(args)
        ok = False
        try:
            env = start_sshd(work, daemons)
            checks(args, ws, work, env, script, failures)
            ok = not failures
        finally:
            ws.cleanup(keep_files=not ok)
            daemons.stop()
            if ok:
                shutil.rmtree(work, ignore_errors=True)
            else:
                print("(kept in %s and %s)" % (work, ws.dir))
        if failures:
            raise Failure("\n  ".join([""] + failures))

    return main_with_skip("hang-dump-pdsh on real sshd and pdsh", body)


def start_sshd(work, daemons):
    for key in ("host_key", "client_key"):
        code, _, err, _ = run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", os.path.join(work, key)])
        if code != 0:
            raise Skip("ssh-keygen failed: %s" % err)
    shutil.copy(os.path.join(work, "client_key.pub"), os.path.join(work, "authorized_keys"))
    # sshd's privilege separation directory (the package's tmpfiles.d creates it at boot).
    made_run = not os.path.isdir("/run/sshd")
    if made_run:
        os.makedirs("/run/sshd", 0o755)
    port, hang_port, dead_port = free_ports(3)
    # Every session of the hanging sshd records its pid (killed at the end: a session's command
    # outlives the sshd that started it) and sleeps.
    hang = os.path.join(work, "hang-session")
    os.mkdir(os.path.join(work, "hang-pids"))
    with open(hang, "w") as f:
        f.write('#!/bin/sh\n: >%s/hang-pids/$$\nexec sleep 600\n' % work)
    os.chmod(hang, 0o755)
    daemons.pid_dirs.append(os.path.join(work, "hang-pids"))
    for name, p, extra in (("node", port, ""), ("hang", hang_port, "ForceCommand " + hang)):
        config = os.path.join(work, "sshd-%s.conf" % name)
        with open(config, "w") as f:
            f.write(SSHD_CONFIG.format(port=p, work=work, name=name, extra=extra))
        daemons.start("sshd-" + name, [program("sshd"), "-D", "-e", "-f", config])
    with open(os.path.join(work, "ssh_config"), "w") as f:
        f.write(SSH_CONFIG.format(port=port, hang_port=hang_port, dead_port=dead_port, work=work))
    bin_dir = os.path.join(work, "bin")
    os.mkdir(bin_dir)
    with open(os.path.join(bin_dir, "ssh"), "w") as f:
        f.write('#!/bin/sh\n# the real ssh with this test\'s config (keys, known hosts, node names)\n'
                'exec %s -F %s "$@"\n' % (program("ssh"), os.path.join(work, "ssh_config")))
    os.chmod(os.path.join(bin_dir, "ssh"), 0o755)
    env = dict(os.environ)
    env["PATH"] = bin_dir + os.pathsep + env["PATH"]
    for k in ("HANGSHIM_DIR", "LD_PRELOAD", "PDSH_RCMD_TYPE", "PDSH_SSH_ARGS", "PDSH_SSH_ARGS_APPEND"):
        env.pop(k, None)
    for node in ("node0", "node1"):
        os.mkdir(os.path.join(work, node), 0o700)

    def sshd_answers():
        for name in ("sshd-node", "sshd-hang"):
            if not daemons.running(name):
                raise Skip("%s exited: %s" % (name, tail(os.path.join(work, name + ".out"))))
        p = subprocess.run(["ssh", "node0", "true"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=20)
        return p.returncode == 0
    try:
        wait_until("sshd on 127.0.0.1:%d" % port, sshd_answers, 20, os.path.join(work, "sshd-node.out"))
    finally:
        if made_run:
            daemons.cleanup_dirs = ["/run/sshd"]
    return env


def checks(args, ws, work, env, script, failures):
    truth, status = ws.launch(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                           "scenarios", "barrier_skipped.py"), 2, args.python)
    expect(status["state"] == "hung", "the scenario did not hang: %s" % status["state"])
    # Two "nodes": rank 0's ledger in node0's directory, rank 1's in node1's.
    for path in glob.glob(os.path.join(ws.ledgers, "*.ledger")):
        rank = int(os.path.basename(path).split("-")[1][1:])
        shutil.copy(path, os.path.join(work, "node%d" % (rank % 2)))
    expect(sorted(os.listdir(os.path.join(work, "node0"))) and os.listdir(os.path.join(work, "node1")),
           "the ledgers did not split over two nodes: %s" % os.listdir(ws.ledgers))

    def case(name, fn):
        t = time.monotonic()
        try:
            fn()
            print("  ok   %-36s %5.1f s" % (name, time.monotonic() - t))
        except Failure as e:
            print("  FAIL %-36s %5.1f s" % (name, time.monotonic() - t))
            failures.append("%s: %s" % (name, e))

    def collect(label, route, hosts, answered, limit=None):
        out_dir = os.path.join(work, "out-" + label)
        argv = [script, "-w", hosts] + route + ["--out", out_dir, "--hangshim", args.hangshim]
        if limit:
            argv += ["--timeout", str(limit)]
        code, out, err, seconds = run(argv + ["--", "--json"], env=env, timeout=limit + 60 if limit else 90)
        expect(code == 0, "%s: exit %d: %s" % (label, code, err))
        report = json.loads(out)
        Checker(truth, report).check_verdict(report, "%s (%s)" % (label, truth["scenario"]))
        all_hosts = hosts.split(",")
        missing = [h for h in all_hosts if h not in answered]
        lines = [l for l in err.splitlines() if "hosts answered" in l]
        expect(len(lines) == 1 and ("%d of %d hosts answered" % (len(answered), len(all_hosts))) in lines[0],
               "%s: no '%d of %d hosts answered' line: %s" % (label, len(answered), len(all_hosts), err))
        for h in missing:
            expect(h in lines[0], "%s: the missing host %s is not named: %s" % (label, h, lines[0]))
        exports = sorted(n for n in os.listdir(out_dir) if not n.startswith("."))
        expect(exports == sorted(h + ".json" for h in answered), "%s: exports %s" % (label, exports))
        return lines[0], seconds

    took = {}

    def two_nodes(route_name, route):
        took[route_name] = collect(route_name + "-two", route, "node0,node1", ["node0", "node1"])[1]

    for route_name, route in (("pdsh", []), ("ssh", ["--ssh"])):
        case("%s: two nodes" % route_name, lambda: two_nodes(route_name, route))
        def hanging():
            # The limit: five times what the two nodes took (a loaded machine makes ssh slow, and
            # the healthy nodes must answer within it). That the collector ends at all is the
            # point: without the limit it waits on hangnode forever, which run()'s own timeout
            # (limit + 60 s) turns into a failure; no tighter time window is judged.
            limit = max(8, int(5 * took.get(route_name, 5)) + 1)
            line, _ = collect(route_name + "-hang", route, "node0,hangnode,node1,deadnode", ["node0", "node1"],
                                    limit=limit)
            expect("hangnode (no answer within %d s)" % limit in line,
                   "the hang is not said to be the time limit: %s" % line)
        case("%s: hosts that hang and refuse, --timeout" % route_name, hanging)

        def nothing():
            cwd = os.path.join(work, "cwd-" + route_name)
            os.mkdir(cwd)
            code, out, err, _ = run([script, "-w", "deadnode"] + route + ["--hangshim", args.hangshim], env=env,
                                    cwd=cwd, timeout=60)
            one_line_of_its_own("hang-dump-pdsh", code, err, ["0 of 1 hosts answered", "deadnode"], route_name)
            expect(code == 1, "nothing collected: exit %d" % code)
            expect(not os.listdir(cwd), "left behind: %s" % os.listdir(cwd))
        case("%s: no host answers" % route_name, nothing)


if __name__ == "__main__":
    sys.exit(main())
