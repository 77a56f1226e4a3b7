"""`pyframes bt --native`: gdb's own frames with the Python frames put in at the interpreter's
evaluation-loop frames. The rule is the one `pyframes --native` applies in C++
(pyframes/src/native/merge_native.cpp): each native call of _PyEval_EvalFrameDefault (or a
compiler-split part of it, "_PyEval_EvalFrameDefault.cold") ran one run of Python frames, which
ends at an entry frame (Frame::is_entry, "entry" in the JSON; 3.11+ runs several Python frames
per call, earlier versions one, every frame an entry). When the number of calls and the number
of runs differ, or the Python stack was cut short, nothing is guessed: both stacks are shown,
with a note saying why. Plain data in, plain data out: tested without gdb."""

EVAL_LOOP = "_PyEval_EvalFrameDefault"


def is_eval_loop(name):
    return bool(name) and name.startswith(EVAL_LOOP) and (len(name) == len(EVAL_LOOP) or name[len(EVAL_LOOP)] == ".")


def python_runs(python_frames):
    """How many evaluation-loop calls ran these Python frames (innermost first): one per entry
    frame, plus one for trailing frames whose outermost is not marked as an entry."""
    runs = sum(1 for frame in python_frames if frame.get("entry"))
    if python_frames and not python_frames[-1].get("entry"):
        runs += 1
    return runs


def merge(python_frames, native_frames, python_truncated=False):
    """Returns (merged, note). `native_frames` are dicts with at least "name", innermost first.
    merged is a list of ("native", frame) and ("python", index) items, index into
    python_frames, when the stacks could be merged; otherwise None and a note."""
    if python_truncated:
        return None, "native stack not merged: the Python stack is incomplete"
    calls = sum(1 for frame in native_frames if is_eval_loop(frame.get("name")))
    runs = python_runs(python_frames)
    if calls != runs:
        return None, "native stack not merged: %d call%s of the evaluation loop for %d run%s of Python frames" % (
            calls, "" if calls == 1 else "s", runs, "" if runs == 1 else "s")
    merged = []
    next_python = 0
    for frame in native_frames:
        if not is_eval_loop(frame.get("name")):
            merged.append(("native", frame))
            continue
        # This call ran Python frames up to and including the next entry frame.
        while next_python < len(python_frames):
            merged.append(("python", next_python))
            next_python += 1
            if python_frames[next_python - 1].get("entry"):
                break
    return merged, None
