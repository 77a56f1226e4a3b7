"""gdb extension: what pyframes reads beyond frames, as the extension shows it, on a live process
(gdb -p), against what the programs record about themselves:
  positions  `pyframes bt` on tests/pyframes/live/programs/case_positions.py: from 3.11 carets
             under the source line where the instruction's column range (code.co_positions())
             is part of the line, none elsewhere
  values     `pyframes frame N` + `pyframes locals` on case_values.py: each local's repr as
             Python's repr() gives it (nested containers whole, self-containing ones as [...],
             numpy values, module-qualified objects)

    run_gdb_features.py --group positions|values --python PY --loader build/gdb/pyframes-gdb.py
Every target is killed."""
import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "pyframes", "live"))
sys.path.insert(0, os.path.join(HERE, "..", "pyframes", "core"))

from itest_targets import Targets, TargetError  # noqa: E402
from features_itest import expected_carets  # noqa: E402

import gdb_session as gs  # noqa: E402

PROGRAMS = os.path.normpath(os.path.join(HERE, "..", "pyframes", "live", "programs"))


def check_positions(args, targets, workdir):
    target = targets.start("case_positions.py")
    truth = target.wait_ready()
    record = truth["threads"][0]
    results = gs.session(args.loader, ["-p", str(target.pid)], [["select-lwp", record["native_id"]], "pyframes bt"],
                         workdir)
    bt = results[1]
    if bt["error"]:
        return ["pyframes bt failed: %s" % bt["error"]], ""
    lines = bt["output"].split("\n")
    problems = []
    seen = 0
    for index, want in enumerate(record["positions"], start=1):  # #0 is block() itself
        at = [i for i, line in enumerate(lines) if line.startswith("#%d " % index)]
        if len(at) != 1:
            problems.append("no single line for frame #%d in %r" % (index, bt["output"][:2000]))
            continue
        below = lines[at[0] + 2] if at[0] + 2 < len(lines) else ""
        expected = None
        if "position" in want and want["position"][1] == want["line"]:
            expected = expected_carets(record["frames"][0]["file"], want["line"], want["position"][2],
                                       want["position"][3])
        if expected is None and below.strip().startswith("^"):
            problems.append("#%d %s: carets %r where none say anything" % (index, want["function"], below))
        elif expected is not None:
            seen += 1
            if below != expected:
                problems.append("#%d %s: carets %r, expected %r" % (index, want["function"], below, expected))
    return problems, "%d frames with carets" % seen


def check_values(args, targets, workdir):
    target = targets.start("case_values.py")
    truth = target.wait_ready()
    record = truth["threads"][0]
    commands = [["select-lwp", record["native_id"]]]
    functions = sorted(record["values"])
    for function in functions:
        number = [f["function"] for f in record["frames"]].index(function)
        commands += ["pyframes frame %d" % number, "pyframes locals"]
    results = gs.session(args.loader, ["-p", str(target.pid)], commands, workdir)
    problems = []
    checked = 0
    for i, function in enumerate(functions):
        shown = results[2 + 2 * i]
        if shown["error"]:
            problems.append("%s: pyframes locals failed: %s" % (function, shown["error"]))
            continue
        got = gs.parse_locals(shown["output"])
        for name, want in sorted(record["values"][function]["locals"].items()):
            if want["expect"] != "exact":
                continue
            checked += 1
            if name not in got or got[name][0] != want["repr"]:
                problems.append("%s: %s = %r, Python: %r" % (function, name, got.get(name, (None,))[0], want["repr"]))
    return problems, "%d values in %s" % (checked, ", ".join(functions))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--group", choices=("positions", "values"), required=True)
    parser.add_argument("--python", required=True)
    parser.add_argument("--loader", required=True)
    args = parser.parse_args()
    check = {"positions": check_positions, "values": check_values}[args.group]
    with tempfile.TemporaryDirectory(prefix="gdb-features-") as workdir:
        os.chmod(workdir, 0o755)
        with Targets(args.python, PROGRAMS, workdir) as targets:
            try:
                problems, detail = check(args, targets, workdir)
            except (TargetError, gs.GdbFailure) as error:
                problems, detail = [str(error)], ""
    for problem in problems:
        print("FAIL " + problem)
    print("%s: gdb %s on %s (%s)" % ("FAILED" if problems else "PASSED", args.group, args.python, detail))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
