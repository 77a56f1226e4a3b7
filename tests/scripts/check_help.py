"""A script's --help and its answer to a bad argument:

  * --help: exit 0, the usage on stdout, naming the script, and nothing on stderr;
  * an unknown option: exit 2 and one line on stderr (argparse: its usage and the error).

    check_help.py [--python PY] SCRIPT
"""

import argparse
import os
import subprocess
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--python")
    p.add_argument("script")
    args = p.parse_args()
    name = os.path.basename(args.script)
    command = ([args.python] if args.python else []) + [args.script]

    def run(*extra):
        return subprocess.run(command + list(extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=30, env=dict(os.environ, PATH="/usr/bin:/bin"))

    problems = []
    h = run("--help")
    if h.returncode != 0 or ("usage: " + name) not in h.stdout or h.stderr:
        problems.append("--help: exit %d, stdout %r, stderr %r" % (h.returncode, h.stdout[:300], h.stderr))
    bad = run("--no-such-option")
    lines = bad.stderr.splitlines()
    one_line = len(lines) == 1 if not args.python else lines and "error:" in lines[-1]
    if bad.returncode != 2 or not one_line or "--no-such-option" not in bad.stderr:
        problems.append("--no-such-option: exit %d, stderr %r" % (bad.returncode, bad.stderr))
    for problem in problems:
        print("FAIL %s %s" % (name, problem))
    if problems:
        return 1
    print("ok %s: %s" % (name, h.stdout.splitlines()[0] if h.stdout else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
