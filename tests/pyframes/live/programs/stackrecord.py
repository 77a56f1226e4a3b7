"""Ground truth for the pyframes integration tests, reported by the interpreter itself.

A test program calls setup(expected=N), then N threads each call hold(label) (or publish() and
then spin). hold() records the calling thread's stack with sys._getframe, innermost first, and
blocks in time.sleep on the very line whose number it recorded for its own frame. When all N
records are in, the last thread writes them as JSON to the path given as sys.argv[1]
(atomically: a temporary file renamed), so the test driver knows the target is ready.

Python 3.6 syntax only: the same programs run on every interpreter under test.
"""
import ctypes
import json
import os
import platform
import sys
import sysconfig
import threading
import time

_lock = threading.Lock()
_records = []
_expected = 1
_extra = {}
_libc = ctypes.CDLL(None, use_errno=True)
_SYS_GETTID = 186  # x86_64


def native_id():
    """The Linux TID of the calling thread (threading.get_native_id() exists only from 3.8)."""
    return int(_libc.syscall(_SYS_GETTID))


def setup(expected=1, **extra):
    """Declare how many records complete the ground truth; `extra` goes into the document."""
    global _expected
    _expected = expected
    _extra.update(extra)


def describe(frame, line=None):
    code = frame.f_code
    entry = {
        "function": code.co_name,
        "file": code.co_filename,
        "line": frame.f_lineno if line is None else line,
    }
    qualname = getattr(code, "co_qualname", None)  # 3.11+
    if qualname is not None:
        entry["qualname"] = qualname
    return entry


def stack_of(frame):
    """The frames from `frame` outwards, innermost first."""
    frames = []
    while frame is not None:
        frames.append(describe(frame))
        frame = frame.f_back
    return frames


def thread_name():
    """The name Python's threading module knows for this thread, or None for a raw thread
    (threading.current_thread() would register a _DummyThread, so it is not called)."""
    thread = threading._active.get(threading.get_ident())
    return thread.name if thread is not None else None


def comm():
    # Bytes: from 3.14 Python names the OS thread after the Python thread, and the kernel cuts
    # the name at 15 bytes, possibly inside a UTF-8 character.
    with open("/proc/self/task/%d/comm" % native_id(), "rb") as f:
        return f.read().rstrip(b"\n").decode("utf-8", "replace")


def publish(label, frames, **fields):
    record = {
        "label": label,
        "thread_id": threading.get_ident(),
        "native_id": native_id(),
        "name": thread_name(),
        "comm": comm(),
        "frames": frames,
    }
    record.update(fields)
    with _lock:
        _records.append(record)
        if len(_records) == _expected:
            _write()


def _write():
    out = sys.argv[1]
    document = {
        "pid": os.getpid(),
        "python": platform.python_version(),
        "executable": sys.executable,
        "threads": _records,
        "thread_ids": [t.ident for t in threading.enumerate()],
        # A free-threaded build, and whether its GIL is on (the interpreter's own word; default
        # builds always have one).
        "free_threaded": bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
        "gil_enabled": getattr(sys, "_is_gil_enabled", lambda: True)(),
    }
    document.update(_extra)
    with open(out + ".tmp", "w", encoding="utf-8") as f:
        json.dump(document, f, ensure_ascii=False, indent=1)
    os.rename(out + ".tmp", out)


def _at_line(frames, line):
    frames[0]["line"] = line
    return frames


def hold(label="main", **fields):
    """Record the calling thread's stack, then block forever. Publishing and sleeping share one
    line, so the line recorded for hold's own frame is the line it blocks on."""
    frames = stack_of(sys._getframe())
    publish(label, _at_line(frames, sys._getframe().f_lineno), blocking=True, **fields); time.sleep(10 ** 8)  # noqa: E702
