"""`hangshim report`, asked with HANGSHIM_HUGE_PAGES=1, runs itself once more with glibc's malloc
asking for transparent huge pages (preload/cli/huge_pages.h), seen with strace following the exec:

  * not asked (unset, 0, anything but 1): one execve;
  * asked, where the kernel gives huge pages (THP "madvise" or "always"): two execve calls, the
    second of /proc/self/exe with the same arguments and GLIBC_TUNABLES=glibc.malloc.hugetlb=1
    added; where it does not ("never", or no THP): one;
  * asked, with a GLIBC_TUNABLES of the user's: one execve, the user's value kept;
  * started by naming the dynamic loader (ld-linux-x86-64.so.2 hangshim report ...; a dynamically
    linked build only): one execve, since /proc/self/exe is then the loader;
  * the report is the same either way (text and exit status).

Skipped (77) without strace (scripts/setup.sh installs it).

    run_huge_pages.py --hangshim CLI --fixture REPORT_FIXTURE
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

from report_test_lib import expect, run_checks

SKIP = 77
THP_MODE = "/sys/kernel/mm/transparent_hugepage/enabled"
LOADER = "/lib64/ld-linux-x86-64.so.2"


def run(command, env=None):
    full = dict(os.environ)
    full.pop("GLIBC_TUNABLES", None)
    full.pop("HANGSHIM_HUGE_PAGES", None)
    full.update(env or {})
    return subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=120, env=full)


def execs(strace_log):
    """The execve calls strace saw, each as (path, its text), in order."""
    with open(strace_log) as f:
        calls = [line for line in f if "execve(" in line and "= 0" in line]
    return [(re.search(r'execve\("([^"]*)"', line).group(1), line) for line in calls]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--hangshim", required=True)
    p.add_argument("--fixture", required=True)
    args = p.parse_args()
    strace = shutil.which("strace")
    if strace is None:
        print("SKIP huge pages: no strace (scripts/setup.sh installs it)")
        return SKIP
    try:
        with open(THP_MODE) as f:
            mode = f.read()
    except OSError:
        mode = ""
    gives = "[madvise]" in mode or "[always]" in mode

    def body(work):
        ledgers = os.path.join(work, "ledgers")
        os.mkdir(ledgers, 0o700)
        made = run([args.fixture, "job", ledgers, "--ranks", "4", "--collectives", "20"])
        expect(made.returncode == 0, "report_fixture job failed: %s" % made.stderr)
        log = os.path.join(work, "strace.log")

        def traced(env, prefix=()):
            out = run([strace, "-f", "-qq", "-v", "-s", "256", "-e", "trace=execve", "-o", log, *prefix, args.hangshim,
                       "report", "--no-stacks", ledgers], env)
            return out, execs(log)

        plain = run([args.hangshim, "report", "--no-stacks", ledgers])
        expect(plain.returncode == 0 and plain.stdout.startswith("HANG: rank 2"),
               "the report without huge pages: exit %d: %s%s" % (plain.returncode, plain.stdout[:300], plain.stderr))
        out, calls = traced({})
        expect((out.returncode, out.stdout) == (plain.returncode, plain.stdout), "traced, the report differs")
        expect(len(calls) == 1, "not asked for huge pages: %d execve calls, not 1:\n%s" % (len(calls), "".join(c[1] for c in calls)))

        asked = {"HANGSHIM_HUGE_PAGES": "1"}
        out, calls = traced(asked)
        expect((out.returncode, out.stdout) == (plain.returncode, plain.stdout),
               "the report run again differs: exit %d\n%s" % (out.returncode, out.stdout[:2000]))
        if gives:
            expect(len(calls) == 2, "THP %s: %d execve calls, not 2:\n%s" % (mode.strip(), len(calls), "".join(c[1] for c in calls)))
            again = calls[1][1]
            expect(calls[1][0] == "/proc/self/exe", "run again as %s, not /proc/self/exe" % calls[1][0])
            expect('"report", "--no-stacks", "%s"' % ledgers in again, "not the same arguments: %s" % again)
            expect('"GLIBC_TUNABLES=glibc.malloc.hugetlb=1"' in again, "no GLIBC_TUNABLES in: %s" % again)
        else:
            expect(len(calls) == 1, "THP %r: %d execve calls, not 1" % (mode.strip(), len(calls)))

        for env in ({"HANGSHIM_HUGE_PAGES": "0"}, {"HANGSHIM_HUGE_PAGES": "yes"},
                    dict(asked, GLIBC_TUNABLES="glibc.malloc.perturb=0")):
            out, calls = traced(env)
            expect((out.returncode, out.stdout) == (plain.returncode, plain.stdout), "with %s the report differs" % env)
            expect(len(calls) == 1, "with %s: %d execve calls, not 1:\n%s" % (env, len(calls), "".join(c[1] for c in calls)))
            if "GLIBC_TUNABLES" in env:
                expect('"GLIBC_TUNABLES=glibc.malloc.perturb=0"' in calls[0][1], "the user's GLIBC_TUNABLES changed")

        # ld.so --verify: 0 for a dynamically linked program it can load (a static release build is not).
        if os.path.exists(LOADER) and run([LOADER, "--verify", args.hangshim]).returncode == 0:
            out, calls = traced(asked, (LOADER,))
            expect((out.returncode, out.stdout) == (plain.returncode, plain.stdout),
                   "started by the loader, the report differs: exit %d: %s%s" % (out.returncode, out.stdout[:300], out.stderr))
            expect(len(calls) == 1, "started by the loader: %d execve calls, not 1:\n%s" % (len(calls), "".join(c[1] for c in calls)))

    return run_checks("huge pages", "hangshim-thp-", body,
                      "run again with glibc.malloc.hugetlb=1 (THP %s) only with HANGSHIM_HUGE_PAGES=1, not with the user's tunables"
                      % (mode.strip() or "absent"))


if __name__ == "__main__":
    sys.exit(main())
