"""Checks of the extension's stack commands against the ground truth the target programs
recorded about themselves (tests/pyframes/live/programs/stackrecord.py): frames, thread coverage,
--native merging, list, up/down/frame, locals and print."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pyframes", "live"))

from itest_checks import expected_name, source_line  # noqa: E402

import gdb_session as gs  # noqa: E402


def want_name(frame):
    return frame.get("qualname") or frame["function"]


def frame_text(frame):
    return "%s (%s:%s)" % (want_name(frame), frame["file"], frame["line"])


def check_python_frames(got, want, what, check_numbers=True):
    """got: parse_frames() python entries; want: the recorded frames, innermost first."""
    problems = []
    if len(got) != len(want):
        problems.append("%s: %d Python frames, the program recorded %d: %s" % (
            what, len(got), len(want), [g[2] for g in got]))
    for index, (g, w) in enumerate(zip(got, want)):
        _kind, number, function, file, line, source = g
        bad = []
        if check_numbers and number != index:
            bad.append("numbered #%d" % number)
        if function != want_name(w):
            bad.append("function %r" % function)
        if file != w["file"]:
            bad.append("file %r" % file)
        if line != w["line"]:
            bad.append("line %r" % line)
        expected_source = source_line(w["file"], w["line"])
        if expected_source is not None and source != expected_source:
            bad.append("source line %r, the file has %r" % (source, expected_source))
        if bad:
            problems.append("%s: frame #%d %s: %s" % (what, index, frame_text(w), "; ".join(bad)))
    return problems


def python_only(frames):
    return [f for f in frames if f[0] == "python"]


def check_bt(output, record, what):
    return check_python_frames(python_only(gs.parse_frames(output.split("\n"))), record["frames"], what)


_TRACEBACK_FILE = re.compile(r'^  File "(.*)", line (\d+), in (.*)$')


def check_traceback(output, record, what):
    """py-bt in libpython.py's format: 'Traceback (most recent call first):', then per Python
    frame '  File "F", line N, in NAME' and '    SOURCE' (C frames libpython shows, '  <...>',
    between them), compared with the frames the program recorded (co_name, file, line)."""
    lines = output.split("\n")
    if "Traceback (most recent call first):" not in lines:
        return ["%s: no 'Traceback (most recent call first):' line: %r" % (what, output[:300])]
    lines = lines[lines.index("Traceback (most recent call first):") + 1:]
    got = []
    for i, line in enumerate(lines):
        match = _TRACEBACK_FILE.match(line)
        if match:
            following = lines[i + 1] if i + 1 < len(lines) else ""
            source = following[4:] if following.startswith("    ") else None
            got.append((match.group(3), match.group(1), int(match.group(2)), source))
    problems = []
    want = record["frames"]
    if len(got) != len(want):
        problems.append("%s: %d File lines, the program recorded %d frames" % (what, len(got), len(want)))
    for index, (g, w) in enumerate(zip(got, want)):
        expected_source = source_line(w["file"], w["line"])
        if g[:3] != (w["function"], w["file"], w["line"]) or (expected_source is not None and g[3] != expected_source):
            problems.append("%s: frame %d is %r, the program recorded %s, source %r" % (
                what, index, g, frame_text(w), expected_source))
    return problems


def check_native(output, record, what):
    """--native: the Python frames in order at their places, native frames around them with gdb's
    numbers, no evaluation-loop frame left, no 'not merged' note."""
    problems = []
    frames = gs.parse_frames(output.split("\n"))
    if "not merged" in output:
        problems.append("%s: not merged: %s" % (what, [l for l in output.split("\n") if "not merged" in l]))
    if not frames or frames[0][0] != "native":
        problems.append("%s: the innermost frame is not gdb's native frame" % what)
    levels = [f[1] for f in frames if f[0] == "native"]
    if levels != sorted(levels) or len(set(levels)) != len(levels):
        problems.append("%s: gdb frame numbers out of order: %s" % (what, levels))
    if any(f[2].startswith("_PyEval_EvalFrameDefault") for f in frames if f[0] == "native"):
        problems.append("%s: an evaluation-loop frame was left in" % what)
    return problems + check_python_frames(python_only(frames), record["frames"], what)


def check_apply_all(output, truth, task_ids, what):
    """`thread apply all pyframes bt`: one block per thread of the process; Python threads show
    their recorded stacks, others say they have no Python frames."""
    problems = []
    blocks = gs.apply_all_blocks(output)
    if set(blocks) != set(task_ids):
        problems.append("%s: blocks for LWPs %s, the process has %s" % (what, sorted(blocks), sorted(task_ids)))
    records = dict((r["native_id"], r) for r in truth["threads"])
    for lwp, (_header, lines) in sorted(blocks.items()):
        record = records.get(lwp)
        if record is not None:
            problems += check_python_frames(python_only(gs.parse_frames(lines)), record["frames"],
                                            "%s, LWP %d" % (what, lwp))
        elif lwp in truth.get("native_threads", []):
            if not any("No Python frames in gdb's thread" in line for line in lines):
                problems.append("%s: LWP %d (no Python state) lacks the 'No Python frames' line: %s" % (
                    what, lwp, lines[:3]))
    return problems


def check_all(output, truth, what, core=False):
    """`pyframes bt --all`: a header with gdb's thread and the thread's name, then its frames. A
    core has no /proc/PID/task/TID/comm: threads the threading module does not know are unnamed."""
    problems = []
    blocks = gs.all_blocks(output)
    for record in truth["threads"]:
        block = blocks.get(record["native_id"])
        if block is None:
            problems.append("%s: no block for thread %s (LWP %d)" % (what, record["label"], record["native_id"]))
            continue
        header, lines = block
        want = record["name"] if core else expected_name(record)
        if header.group(3) != want:
            problems.append("%s: thread %s named %r, expected %r" % (what, record["label"], header.group(3), want))
        problems += check_python_frames(python_only(gs.parse_frames(lines)), record["frames"],
                                        "%s, thread %s" % (what, record["label"]))
    return problems


def check_shown_frame(result, record, index, what):
    """up/down/frame print the newly selected frame as '#N  function (file:line)'."""
    if result["error"]:
        return ["%s: failed: %s" % (what, result["error"])]
    frames = python_only(gs.parse_frames(result["output"].split("\n")))
    if len(frames) != 1:
        return ["%s: printed %d frames: %r" % (what, len(frames), result["output"])]
    problems = [] if frames[0][1] == index else ["%s: printed #%d, expected #%d" % (what, frames[0][1], index)]
    return problems + check_python_frames(frames, [record["frames"][index]], "%s (#%d)" % (what, index),
                                          check_numbers=False)


def check_error(result, words, what):
    if not result["error"]:
        return ["%s: no error (printed %r)" % (what, result["output"][:200])]
    if "\n" in result["error"].strip():
        return ["%s: a multi-line error: %r" % (what, result["error"])]
    missing = [w for w in words if w not in result["error"]]
    return ["%s: error %r lacks %s" % (what, result["error"], missing)] if missing else []


def check_listing(result, record, index, what):
    """`pyframes list`: lines line-5..line+5 of the frame's file, the current one marked '>'."""
    if result["error"]:
        return ["%s: failed: %s" % (what, result["error"])]
    frame = record["frames"][index]
    with open(frame["file"], "rb") as f:
        lines = f.read().decode("utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the last line's newline: no line 114 in a file of 113 lines
    listing = gs.parse_listing(result["output"])
    first = max(1, frame["line"] - 5)
    last = min(frame["line"] + 5, len(lines))
    problems = []
    if [n for _m, n, _t in listing] != list(range(first, last + 1)):
        problems.append("%s: listed lines %s, expected %d-%d" % (what, [n for _m, n, _t in listing], first, last))
    marked = [n for m, n, _t in listing if m]
    if marked != [frame["line"]]:
        problems.append("%s: marked %s, the current line is %d" % (what, marked, frame["line"]))
    for _m, number, text in listing:
        if 1 <= number <= len(lines) and text != lines[number - 1].rstrip().expandtabs(8):
            problems.append("%s: line %d reads %r, the file has %r" % (what, number, text, lines[number - 1]))
    return problems


def check_locals(result, want, what):
    if result["error"]:
        return ["%s: failed: %s" % (what, result["error"])]
    got = gs.parse_locals(result["output"])
    problems = []
    if set(got) != set(want):
        problems.append("%s: variables %s, Python has %s" % (what, sorted(got), sorted(want)))
    for name, value in sorted(want.items()):
        if name in got and got[name] != (value["repr"], value["argument"]):
            problems.append("%s: %s = %r (argument %s), Python: %r (argument %s)" % (
                what, name, got[name][0], got[name][1], value["repr"], value["argument"]))
    return problems
