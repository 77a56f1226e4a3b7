"""Ground truth for the core-file tests, reported by the interpreter itself.

The same protocol as the live tests' recorder (tests/pyframes/live/programs/stackrecord.py), so
the core tests can run those programs too: a program calls setup(expected=N); N threads each
call hold(label), which records the calling thread's stack (sys._getframe, innermost first) and
blocks in time.sleep on the very line whose number it recorded for its own frame. When all N
records are in, the JSON document goes to sys.argv[1] (written to a temporary name, renamed).

With CORE_RECORD_ABORT=1 in the environment the main thread's hold() does not sleep: it waits
until every other thread sleeps on its hold line, publishes, and calls os.abort() on the line it
recorded, so the kernel writes a core of a process whose stacks are known exactly.

Python 3.6 syntax only: the same programs run on every interpreter under test.
"""
import ctypes
import json
import os
import platform
import sys
import threading
import time

_lock = threading.Lock()
_records = []
_expected = 1
_libc = ctypes.CDLL(None, use_errno=True)
_SYS_GETTID = 186  # x86_64
ABORT = os.environ.get("CORE_RECORD_ABORT") == "1"


def native_id():
    return int(_libc.syscall(_SYS_GETTID))


def setup(expected=1):
    global _expected
    _expected = expected


def describe(frame, line=None):
    code = frame.f_code
    entry = {"function": code.co_name, "file": code.co_filename,
             "line": frame.f_lineno if line is None else line}
    qualname = getattr(code, "co_qualname", None)  # 3.11+
    if qualname is not None:
        entry["qualname"] = qualname
    return entry


def stack_of(frame, line):
    frames = [describe(frame, line)]
    frame = frame.f_back
    while frame is not None:
        frames.append(describe(frame))
        frame = frame.f_back
    return frames


def publish(label, frames):
    thread = threading._active.get(threading.get_ident())
    record = {"label": label, "thread_id": threading.get_ident(), "native_id": native_id(),
              "name": thread.name if thread is not None else None, "frames": frames, "blocking": True}
    with _lock:
        _records.append(record)
        if len(_records) == _expected:
            _write()


def _write():
    out = sys.argv[1]
    document = {"pid": os.getpid(), "python": platform.python_version(), "executable": sys.executable,
                "argv": [sys.executable] + sys.argv, "threads": _records}
    with open(out + ".tmp", "w", encoding="utf-8") as f:
        json.dump(document, f, ensure_ascii=False, indent=1)
    os.rename(out + ".tmp", out)


def _others_asleep():
    """True when every recorded thread but this one sleeps in hold() on its recorded line."""
    frames = sys._current_frames()
    me = threading.get_ident()
    with _lock:
        others = [r for r in _records if r["thread_id"] != me]
    if len(others) != _expected - 1:
        return False
    for record in others:
        frame = frames.get(record["thread_id"])
        if frame is None or frame.f_code is not hold.__code__ or frame.f_lineno != record["frames"][0]["line"]:
            return False
    return True


def _abort_when_others_sleep(label):
    while not _others_asleep():
        time.sleep(0.01)
    frame = sys._getframe()
    frames = stack_of(frame, frame.f_lineno + 1)
    publish(label, frames); os.abort()  # noqa: E702


def hold(label="main"):
    """Record the calling thread's stack, then block forever (or abort, see above). Publishing
    and blocking share one line, so the recorded line of the innermost frame is where it blocks."""
    if ABORT and threading.current_thread() is threading.main_thread():
        _abort_when_others_sleep(label)
    frame = sys._getframe()
    frames = stack_of(frame, frame.f_lineno + 1)
    publish(label, frames); time.sleep(10 ** 8)  # noqa: E702
