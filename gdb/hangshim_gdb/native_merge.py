"""`pyframes bt --native`: gdb's own frames with the Python frames put in at the interpreter's
evaluation-loop frames. The rule exists once, in C++ (pyframes/src/native/merge_native.cpp,
what `pyframes --native` applies to its own unwind): the thread's Python frames and gdb's
native frames go to `pyframes --merge-json --native` as a JSON document, and its answer is
either the merged frames or the Python frames with the native ones left apart and a note
saying why (the counts of evaluation-loop calls and Python runs differ, the Python stack was
cut short).

gdb names no frame of the evaluation loop's split-off part in a stripped interpreter (Debian's
3.14 and 3.15 run almost all of it there): when some frame has no name, the target's mappings go
along, and pyframes names such frames with --native's own symbolizer."""
import json
import os
import shutil
import tempfile

from .tools import PYFRAMES, ToolError, run

MERGE_TIMEOUT = 60


def _native_document(frame):
    """gdb's frame as a pyframes JSON native frame."""
    return {"kind": "native", "function": frame.get("name") or "", "file": "", "line": 0,
            "address": frame.get("pc", 0), "module": frame.get("where") or ""}


def _python_document(frame):
    """A Python frame of the snapshot, as pyframes wrote it (locals are not needed here)."""
    return dict((k, v) for k, v in frame.items() if k != "locals")


def _target_mappings():
    """The selected target's mappings, or [] when gdb cannot list them (the frames
    then keep gdb's names: nothing is merged wrongly, at worst not at all)."""
    from . import target as targets  # imports gdb: not at module level (tests/gdb/test_parsing.py)
    try:
        return targets.mappings(targets.current(), "pyframes bt --native")
    except ToolError:
        return []


def merge(thread, native_frames, problem, mappings=None):
    """(merged, note): merged is a list of ("native", gdb frame) and ("python", index into the
    thread's frames) items when pyframes merged the stacks, else None; note is pyframes' note
    (why not merged, or that the native stack may be incomplete), or empty. `mappings`: the
    target's, as parsing.Mapping; None asks gdb for them when some frame has no name."""
    if not native_frames:
        return None, "native stack not available: %s" % (problem or "gdb has no frames for this thread")
    if mappings is None:
        mappings = _target_mappings() if any(not f.get("name") for f in native_frames) else []
    mappings = [{"start": m.start, "end": m.end, "offset": m.offset, "path": m.path}
                for m in mappings if m.path.startswith("/") and m.end > m.start]
    document = {"processes": [{"pid": 0, "python": "", "mappings": mappings, "threads": [{
        "native_id": thread.get("native_id", 0), "thread_id": thread.get("thread_id", 0),
        "truncated": bool(thread.get("truncated")), "truncation_reason": thread.get("truncation_reason", ""),
        "frames": [_python_document(f) for f in thread.get("frames", [])],
        "native_frames": [_native_document(f) for f in native_frames], "native_note": problem or ""}]}]}
    directory = tempfile.mkdtemp(prefix="pyframes-native-")  # 0700
    try:
        path = os.path.join(directory, "thread.json")
        with open(path, "w") as f:
            json.dump(document, f)
        done = run(PYFRAMES, ["--merge-json", "--native", "--no-merge", "--json", path], MERGE_TIMEOUT)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    try:
        merged_thread = json.loads(done.stdout)["processes"][0]["threads"][0]
    except (ValueError, KeyError, IndexError, TypeError):
        raise ToolError("pyframes bt --native: pyframes could not merge the stacks: %s"
                        % (done.first_error_line() or "no JSON answer (is PYFRAMES a pyframes executable?)"))
    note = merged_thread.get("native_note", "")
    if merged_thread.get("native_frames"):
        return None, note
    # pyframes keeps the native frames it did not replace, in gdb's order: match them back to
    # gdb's frames (for their frame numbers) by position, checking the addresses agree.
    gdb_frames = iter(native_frames)
    python_index = 0
    merged = []
    for frame in merged_thread.get("frames", []):
        if frame.get("kind") != "native":
            merged.append(("python", python_index))
            python_index += 1
            continue
        for candidate in gdb_frames:
            if candidate.get("pc", 0) == frame.get("address", 0):
                merged.append(("native", candidate))
                break
        else:
            raise ToolError("pyframes bt --native: pyframes' merged stack does not follow gdb's frames")
    return merged, note
