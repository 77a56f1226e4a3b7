"""Runs pyframes and compares what it says with the ground truth a target recorded about itself:
frame by frame (function, file, line; qualname where the interpreter has one), innermost first."""
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
from self_recording import recorded_threads  # noqa: E402


# The caret line pyframes prints under a source line to mark the running instruction's columns.
CARETS = re.compile(r"^        ( *)(\^+)$")


class Run(object):
    def __init__(self, argv, returncode, stdout, stderr, seconds):
        self.argv = argv
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.seconds = seconds

    def stderr_lines(self):
        return [line for line in self.stderr.split("\n") if line]

    def describe(self):
        return "`%s` exited %s after %.2fs; stderr: %s" % (
            " ".join(self.argv), self.returncode, self.seconds, self.stderr.strip()[:2000] or "(empty)")


def run_pyframes(pyframes, args, timeout=30.0, as_user=None):
    argv = [pyframes] + [str(a) for a in args]
    if as_user is not None:
        argv = ["setpriv", "--reuid=%s" % as_user, "--regid=nogroup", "--clear-groups", "--"] + argv
    env = dict(os.environ)
    env["NO_COLOR"] = "1"
    start = time.monotonic()
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return Run(argv, "timeout", "", "pyframes did not finish within %ss (a hang)" % timeout, timeout)
    return Run(argv, done.returncode, done.stdout.decode("utf-8", "strict"), done.stderr.decode("utf-8", "strict"),
               time.monotonic() - start)


def python_frames(thread):
    return [f for f in thread["frames"] if f.get("kind") == "python"]


def frame_text(frame):
    return "%s (%s:%s)" % (frame.get("function"), frame.get("file"), frame.get("line"))


def compare_frames(got, want, spin=None):
    """Problems between pyframes' frames and the recorded ones; `spin` gives the innermost
    frame's allowed line range instead of one line."""
    problems = []
    for index in range(max(len(got), len(want))):
        if index >= len(got):
            problems.append("frame #%d missing: expected %s" % (index, frame_text(want[index])))
            continue
        if index >= len(want):
            problems.append("frame #%d extra: %s" % (index, frame_text(got[index])))
            continue
        g, w = got[index], want[index]
        bad = []
        for key in ("function", "file", "qualname"):
            if key in w and g.get(key) != w[key]:
                bad.append("%s %r != %r" % (key, g.get(key), w[key]))
        if index == 0 and spin is not None:
            if not spin["first_line"] <= g.get("line", 0) <= spin["last_line"]:
                bad.append("line %s not in the loop's lines %d-%d" % (g.get("line"), spin["first_line"], spin["last_line"]))
        elif g.get("line") != w["line"]:
            bad.append("line %s != %s" % (g.get("line"), w["line"]))
        if bad:
            problems.append("frame #%d %s: %s" % (index, frame_text(w), "; ".join(bad)))
    return problems


def expected_name(record):
    return record["name"] if record["name"] is not None else record["comm"]


def compare_process(process, truth, gil_holders=()):
    """Problems between one process of the --json document and a target's ground truth."""
    problems = []
    if process.get("python") != truth["python"]:
        problems.append("python %r != %r" % (process.get("python"), truth["python"]))
    free_threaded, gil_enabled = truth.get("free_threaded", False), truth.get("gil_enabled", True)
    if process.get("free_threaded", False) is not free_threaded:
        problems.append("free_threaded %s, but the interpreter says %s" % (process.get("free_threaded"), free_threaded))
    if process.get("gil_disabled", False) is not (free_threaded and not gil_enabled):
        problems.append("gil_disabled %s, but the interpreter says its GIL is %s" %
                        (process.get("gil_disabled"), "on" if gil_enabled else "off"))
    if not gil_enabled:
        gil_holders = ()  # nothing holds a GIL that is off, the spinner included
    threads = {t["thread_id"]: t for t in process.get("threads", [])}
    expected_ids = set(truth["thread_ids"]) | set(r["thread_id"] for r in truth["threads"])
    if set(threads) != expected_ids:
        problems.append("threads %s != %s" % (sorted(threads), sorted(expected_ids)))
    for label, thread, record in recorded_threads(process.get("threads", []), truth["threads"], problems):
        if thread.get("native_id") != record["native_id"]:
            problems.append("%s: native_id %s != %s" % (label, thread.get("native_id"), record["native_id"]))
        if thread.get("name") != expected_name(record):
            problems.append("%s: name %r != %r" % (label, thread.get("name"), expected_name(record)))
        want_gil = record["label"] in gil_holders
        if thread.get("gil") is not want_gil:
            problems.append("%s: gil %s, expected %s" % (label, thread.get("gil"), want_gil))
        if thread.get("truncated"):
            problems.append("%s: marked truncated (%s)" % (label, thread.get("truncation_reason")))
        for problem in compare_frames(python_frames(thread), record["frames"], record.get("spin")):
            problems.append("%s: %s" % (label, problem))
    return problems


def parse_document(run):
    try:
        document = json.loads(run.stdout)
    except ValueError as error:
        raise AssertionError("--json output is not JSON (%s): %r" % (error, run.stdout[:500]))
    return {p["pid"]: p for p in document.get("processes", [])}, document


def source_line(path, line):
    """The cleaned source line pyframes should print under a frame, or None."""
    if not os.path.isfile(path):
        return None
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    if line < 1 or line > len(lines):
        return None
    text = lines[line - 1].decode("utf-8", "replace").strip(" \t\r\f\v")
    return text.replace("\t", " ") or None


def check_text(text, truth):
    """The text output has, for every recorded thread, a block with its native id, name and its
    frames as `function (file:line)` innermost first, each followed by its source line."""
    problems = []
    lines = text.split("\n")
    for record in truth["threads"]:
        header = "Thread %d" % record["native_id"]
        starts = [i for i, line in enumerate(lines) if line == header or line.startswith(header + " ")
                  or line.startswith(header + ":")]
        if len(starts) != 1:
            problems.append("text: %d blocks start with %r" % (len(starts), header))
            continue
        i = starts[0]
        if '"%s"' % expected_name(record) not in lines[i]:
            problems.append("text: %r lacks the name %r" % (lines[i], expected_name(record)))
        i += 1
        for index, frame in enumerate(record["frames"]):
            if i >= len(lines) or not lines[i].startswith("    %s (%s:" % (frame["function"], frame["file"])):
                problems.append("text: frame #%d: expected %s, got %r" % (
                    index, frame_text(frame), lines[i] if i < len(lines) else None))
                break
            if not record.get("spin") or index > 0:
                if lines[i] != "    " + frame_text(frame):
                    problems.append("text: frame #%d: %r != %r" % (index, lines[i], "    " + frame_text(frame)))
            line_no = int(lines[i].rsplit(":", 1)[1].rstrip(")"))
            i += 1
            want = source_line(frame["file"], line_no)
            if want is not None:
                if i >= len(lines) or lines[i] != "        " + want:
                    problems.append("text: frame #%d: source line %r, expected %r" % (
                        index, lines[i] if i < len(lines) else None, want))
                    break
                i += 1
                # 3.11+: carets under the part of the line that runs (checked by features_itest.py).
                if i < len(lines) and CARETS.match(lines[i]):
                    i += 1
    return problems
