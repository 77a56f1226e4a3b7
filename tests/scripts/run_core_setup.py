"""scripts/core-setup against fake proc trees (HANGSHIM_PROC_ROOT) and fake systemctl /
coredumpctl commands: for each kernel setting the exit status (0: cores reach you, 1: they do
not) and the fix line it must print.

    run_core_setup.py --script CORE_SETUP
"""

import os
import stat
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from driver import required_args, run_in_scratch  # noqa: E402
from expect import expect  # noqa: E402

APPORT = "|/usr/share/apport/apport -p%p -s%s -c%c -d%d -P%P -u%u -g%g -- %E"
SYSTEMD = "|/lib/systemd/systemd-coredump %P %u %g %s %t %c %h"
SET_PATTERN = "fix: sudo sysctl -w kernel.core_pattern=/var/tmp/core.%e.%p"
LIVE_CORE = ["gcore -o core PID", "pyframes core.PID --exe /path/to/python"]

FAKE_SYSTEMCTL = """#!/bin/sh
# systemctl is-active UNIT, answered from $FAKE_UNIT_STATE
[ "$1" = is-active ] || exit 1
echo "$FAKE_UNIT_STATE"
[ "$FAKE_UNIT_STATE" = active ]
"""


def write(path, text, mode=0o644):
    d = os.path.dirname(path)
    if not os.path.isdir(d):
        os.makedirs(d)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


class Setup(object):
    def __init__(self, script, work):
        self.script = script
        self.work = work
        self.bin = os.path.join(work, "bin")
        write(os.path.join(self.bin, "systemctl"), FAKE_SYSTEMCTL, 0o755)
        write(os.path.join(self.bin, "coredumpctl"), "#!/bin/sh\nexit 0\n", 0o755)
        self.count = 0

    def run(self, pattern, uses_pid="1", suid="0", ptrace="0", ulimit=None, unit_state="active", args=()):
        """core-setup with this proc tree; ulimit: the soft core limit (default: the hard one)."""
        self.count += 1
        root = os.path.join(self.work, "proc%d" % self.count)
        write(os.path.join(root, "sys/kernel/core_pattern"), pattern + "\n")
        write(os.path.join(root, "sys/kernel/core_uses_pid"), uses_pid + "\n")
        write(os.path.join(root, "sys/fs/suid_dumpable"), suid + "\n")
        if ptrace is not None:
            write(os.path.join(root, "sys/kernel/yama/ptrace_scope"), ptrace + "\n")
        env = dict(os.environ, HANGSHIM_PROC_ROOT=root, FAKE_UNIT_STATE=unit_state,
                   PATH=self.bin + os.pathsep + "/usr/bin:/bin")
        limit = "$(ulimit -H -c)" if ulimit is None else ulimit
        p = subprocess.run(["bash", "-c", 'ulimit -S -c %s && exec "$0" "$@"' % limit, self.script] + list(args),
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                           timeout=30)
        return p.returncode, p.stdout, p.stderr


def check(name, result, code, needed=(), absent=()):
    got, out, err = result
    expect(got == code, "%s: exit %d, expected %d:\n%s%s" % (name, got, code, out, err))
    for text in needed:
        expect(text in out, "%s: no %r in:\n%s" % (name, text, out))
    for text in absent:
        expect(text not in out, "%s: %r should not be there:\n%s" % (name, text, out))
    print("ok %s" % name)


def main():
    args = required_args("--script")

    def checks(work):
        s = Setup(args.script, work)
        hard = subprocess.run(["bash", "-c", "ulimit -H -c"], stdout=subprocess.PIPE,
                              universal_newlines=True).stdout.strip()
        good = 0 if hard != "0" else 1  # a hard limit of 0 is a problem no setting here can fix
        cores = os.path.join(work, "cores")
        os.mkdir(cores, 0o1777)
        os.chmod(cores, 0o1777 | stat.S_IRWXU)

        check("pattern into an existing directory", s.run(cores + "/core.%e.%p"), good,
              ["ok       kernel.core_pattern = %s/core.%%e.%%p: %s exists" % (cores, cores)] + LIVE_CORE,
              ["PROBLEM  kernel.core_pattern"])
        missing = os.path.join(work, "no-such-dir")
        check("pattern into a missing directory", s.run(missing + "/core.%e.%p"), 1,
              ["PROBLEM  kernel.core_pattern = %s/core.%%e.%%p, but %s does not exist" % (missing, missing),
               "fix: sudo mkdir -p %s && sudo chmod 1777 %s" % (missing, missing)])
        check("pipe to apport", s.run(APPORT), 1, ["PROBLEM  kernel.core_pattern pipes to apport", SET_PATTERN])
        check("pipe to an active systemd-coredump", s.run(SYSTEMD), good,
              ["kernel.core_pattern pipes to systemd-coredump (socket: active)", "coredumpctl dump PID -o core.PID"],
              ["PROBLEM  kernel.core_pattern"])
        check("pipe to an inactive systemd-coredump", s.run(SYSTEMD, unit_state="inactive"), 1,
              ["systemd-coredump.socket is inactive", "fix: sudo systemctl enable --now systemd-coredump.socket"])
        check("pipe to an unknown helper", s.run("|/opt/site/bin/crashcollector %p"), 1,
              ["pipes to /opt/site/bin/crashcollector", SET_PATTERN])
        check("empty pattern", s.run(""), 1, ["kernel.core_pattern is empty", SET_PATTERN])
        if hard != "0":
            check("ulimit -c 0", s.run(cores + "/core.%e.%p", ulimit="0"), 1,
                  ["PROBLEM  ulimit -c is 0", "fix: ulimit -c unlimited"])
        check("shared file name without core_uses_pid", s.run(cores + "/core", uses_pid="0"), good,
              ["warning  kernel.core_uses_pid is 0", "fix: sudo sysctl -w kernel.core_uses_pid=1"])
        check("ptrace_scope 1", s.run(cores + "/core.%p", ptrace="1"), good,
              ["warning  kernel.yama.ptrace_scope is 1", "fix: sudo sysctl -w kernel.yama.ptrace_scope=0"])
        check("no Yama", s.run(cores + "/core.%p", ptrace=None), good, ["kernel.yama.ptrace_scope is absent"])

        code, out, err = s.run("core", args=["--bogus"])
        expect(code == 2 and len(err.splitlines()) == 1 and err.startswith("core-setup: unknown argument --bogus"),
               "an unknown argument: exit %d, stderr %r" % (code, err))
        env = dict(os.environ, HANGSHIM_PROC_ROOT=os.path.join(work, "nowhere"))
        p2 = subprocess.run([args.script], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            universal_newlines=True, timeout=30)
        expect(p2.returncode == 2 and len(p2.stderr.splitlines()) == 1 and "HANGSHIM_PROC_ROOT" in p2.stderr,
               "a bad HANGSHIM_PROC_ROOT: exit %d, stderr %r" % (p2.returncode, p2.stderr))
        print("ok bad arguments")
    return run_in_scratch("hangshim-core-setup-", checks)


if __name__ == "__main__":
    sys.exit(main())
