"""The README's demo command, run exactly as the README writes it, checked against the diagnosis
the demo's scenario states about itself (its truth JSON, written through
HANGSHIM_SCENARIO_TRUTH, which the launcher passes on to every rank):

  * the command is the first line of the README's first code block that runs scripts/demo.sh;
  * the verdict line names the culprit rank(s), the collective and every rank's line and
    iteration as the truth states them (the same check as the report's scenario tests);
  * the merged stacks show each rank at the line the truth gives it;
  * the demo stops its job: no rank it started is left running.

    run_demo.py --source DIR --build DIR [--tools DIR]   (--tools: the commands from DIR, e.g. a
                                                          venv's bin/ after pip install)
"""

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "preload", "report"))
from report_test_lib import Failure, expect  # noqa: E402  (and tests/common on the path)
from driver import parser_requiring  # noqa: E402
from run_report_case import Checker, base_line  # noqa: E402


def readme_demo_command(readme):
    """The README's demo command: in its first fenced block, the line that runs scripts/demo.sh."""
    with open(readme) as f:
        text = f.read()
    block = re.search(r"```[a-z]*\n(.*?)```", text, re.S)
    expect(block is not None, "README.md has no code block")
    for line in block.group(1).splitlines():
        command = line.split("#", 1)[0].strip()
        if "scripts/demo.sh" in command:
            return command
    raise Failure("the README's first code block has no scripts/demo.sh command: %s" % block.group(1))


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def main():
    parser = parser_requiring("--source", "--build")
    parser.add_argument("--tools", help="take hangshim and pyframes from this directory (HANGSHIM_DEMO_TOOLS)")
    args = parser.parse_args()
    command = readme_demo_command(os.path.join(args.source, "README.md"))
    with tempfile.TemporaryDirectory(prefix="hangshim-demo-test.") as tmp:
        truth_file = os.path.join(tmp, "truth.json")
        env = dict(os.environ, HANGSHIM_BUILD_DIR=args.build, HANGSHIM_SCENARIO_TRUTH=truth_file)
        if args.tools:
            env["HANGSHIM_DEMO_TOOLS"] = args.tools
        start = time.monotonic()
        run = subprocess.run(shlex.split(command), cwd=args.source, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, universal_newlines=True, timeout=400)
        took = time.monotonic() - start
        output = run.stdout
        sys.stdout.write(output)
        print("run_demo: `%s` exited %d after %.1f s" % (command, run.returncode, took))
        expect(run.returncode == 0, "`%s` exited %d" % (command, run.returncode))
        expect(os.path.exists(truth_file), "the demo's scenario wrote no truth (HANGSHIM_SCENARIO_TRUTH not passed on?)")
        with open(truth_file) as f:
            truth = json.load(f)
    lines = output.splitlines()
    verdict = [line for line in lines if line.startswith("HANG:") or line.startswith("OK:")]
    expect(verdict, "the demo printed no verdict")
    Checker(truth, {"communicators": [], "ranks": []}).check_text(verdict[0])
    # The merged stacks (pyframes --children) show every rank at its line from the truth.
    stacks = "\n".join(lines[lines.index(verdict[0]):])
    for rank, state in truth["ranks"].items():
        site = state.get("callsite") or state.get("last_collective", {}).get("callsite")
        expect(site is None or base_line(site) in stacks,
               "rank %s: the stacks after the verdict never show %s" % (rank, base_line(site)))
    # The job is gone: the rank pids the report printed are not running.
    pids = [int(p) for p in re.findall(r"\[pid (\d+) on ", output)]
    deadline = time.monotonic() + 120  # only a job really left running reaches it
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [p for p in pids if alive(p)]
    expect(not left, "the demo left its job running: pids %s" % left)
    print("run_demo: verdict and stacks match the scenario's truth: %s" % verdict[0])


if __name__ == "__main__":
    try:
        main()
    except Failure as e:
        print("FAIL: %s" % e)
        sys.exit(1)
