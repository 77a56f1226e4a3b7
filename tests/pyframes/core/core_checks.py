"""Checks for the core-file tests: run the core driver, compare what it read from a core with
the ground truth the program recorded about itself, frame by frame."""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
from self_recording import recorded_threads  # noqa: E402


class Run(object):
    def __init__(self, argv, completed, seconds):
        self.argv = argv
        self.returncode = completed.returncode
        self.stdout = completed.stdout.decode("utf-8", "replace")
        self.stderr = completed.stderr.decode("utf-8", "replace")
        self.seconds = seconds

    def describe(self):
        return "%s exited %d: %s" % (" ".join(self.argv), self.returncode, (self.stderr or self.stdout).strip()[:2000])

    def document(self):
        return json.loads(self.stdout)


class CliRun(Run):
    """`pyframes --json CORE`: the document in the probe's shape ({"process": ...})."""

    def document(self):
        process = dict(json.loads(self.stdout)["processes"][0])
        process["python_version"] = process.pop("python")
        process.setdefault("command_line", [])
        process.setdefault("warnings", [])
        return {"process": process}


def run_probe(probe, core, extra=(), stacks=True, pyframes=None):
    """Stacks come from the pyframes command itself (what users run); the library-level probe
    serves what the command does not print (raw memory reads)."""
    if stacks and pyframes:
        argv = [pyframes, "--json", core] + list(extra)
        kind = CliRun
    else:
        argv = [probe, core] + (["--stacks"] if stacks else []) + list(extra)
        kind = Run
    started = time.monotonic()
    completed = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=120)
    return kind(argv, completed, time.monotonic() - started)


def one_line_error(run, *needles):
    """Problems unless the run failed with exit 1 and one stderr line holding every needle."""
    problems = []
    if run.returncode != 1:
        problems.append("expected exit 1, got %s" % run.describe())
    lines = run.stderr.strip().splitlines()
    if len(lines) != 1 or not lines[0].startswith("pyframes: "):
        problems.append("expected one 'pyframes: ...' line on stderr, got %r" % run.stderr)
    for needle in needles:
        if needle not in run.stderr:
            problems.append("stderr lacks %r: %r" % (needle, run.stderr.strip()))
    return problems


def compare_frames(label, frames, truth_frames):
    problems = []
    python_frames = [f for f in frames if f.get("kind", "python") == "python"]
    if len(python_frames) != len(truth_frames):
        problems.append("%s: %d Python frames read, %d recorded" % (label, len(python_frames), len(truth_frames)))
    for i, (got, want) in enumerate(zip(python_frames, truth_frames)):
        for key in ("function", "file", "line"):
            if got.get(key) != want[key]:
                problems.append("%s frame %d: %s is %r, recorded %r (read %s:%s %s)" % (
                    label, i, key, got.get(key), want[key], got.get("file"), got.get("line"), got.get("function")))
        if "qualname" in want and got.get("qualname") != want["qualname"]:
            problems.append("%s frame %d: qualname %r, recorded %r" % (label, i, got.get("qualname"), want["qualname"]))
    return problems


def compare_process(document, truth, argv, fatal_prefix):
    """Everything the core reader promises, against the target's own record."""
    process = document["process"]
    problems = []
    if process["pid"] != truth["pid"]:
        problems.append("pid %s, the program was %s" % (process["pid"], truth["pid"]))
    if process["command_line"] != argv:
        problems.append("command line %r, the program ran %r" % (process["command_line"], argv))
    if not process["python_version"].startswith(truth["python"].rsplit(".", 1)[0]):
        problems.append("python version %r, the program ran %s" % (process["python_version"], truth["python"]))
    fatal = process.get("fatal_signal") or ""
    if fatal_prefix is None and fatal:
        problems.append("fatal signal %r for a core of a live process" % fatal)
    if fatal_prefix is not None and not fatal.startswith(fatal_prefix):
        problems.append("fatal signal %r, expected %s" % (fatal, fatal_prefix))
    threads = {t["thread_id"]: t for t in process["threads"]}
    recorded = {t["thread_id"] for t in truth["threads"]}
    extra = [t for t in threads if t not in recorded]
    if extra:
        problems.append("threads read that the program did not record: %s" % extra)
    for label, thread, record in recorded_threads(process["threads"], truth["threads"], problems):
        if thread["native_id"] != record["native_id"]:
            problems.append("%s: native id %s, recorded %s" % (label, thread["native_id"], record["native_id"]))
        if thread.get("name") and record.get("name") and thread["name"] != record["name"]:
            problems.append("%s: name %r, recorded %r" % (label, thread["name"], record["name"]))
        problems += compare_frames(label, thread["frames"], record["frames"])
    return problems
