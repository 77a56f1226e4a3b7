"""Each rank's progress record: where it is in its collectives, written on every call.

One small JSON record per rank at $HANGSHIM_RENDEZVOUS/progress.<rank>.json, rewritten in place
with a single pwrite before and after each collective (state "in" / "out"), after init
("ready"), on an NCCL error ("failed") and at destroy_process_group ("finished"). `events`
counts the writes: the launcher calls a job hung when no rank's count moves. The record names
the collective (op, group, 1-based sequence number on that group), the caller's line outside
ncclpy (file, line, function) and how many times that line has issued a collective (the
"iteration"); `seqs` holds every group's count of collectives so far. Tests can compare a hang with the diagnosis a scenario states.

With HANGSHIM_SCENARIO_STACKS=1, SIGUSR1 makes the rank write every thread's Python stack to
$HANGSHIM_RENDEZVOUS/stacks.<rank>.txt (faulthandler), an independent view of where it waits.
"""

import faulthandler
import json
import os
import signal
import sys
import time

from tensor import DTYPES

DTYPE_NAMES = dict((v[0], k) for k, v in DTYPES.items())

_LIBRARY_FILES = set()
_RECORD_BYTES = 4096

_fd = None
_stacks_file = None
_record = {}
_hits = {}


def register_library(code_filename):
    """Frames from this file belong to the library, not to the caller."""
    _LIBRARY_FILES.add(code_filename)


register_library(sys._getframe(0).f_code.co_filename)


def start(rank):
    global _fd, _stacks_file
    directory = os.environ.get("HANGSHIM_RENDEZVOUS")
    _record.update({"rank": rank, "pid": os.getpid(), "events": 0, "state": "starting"})
    if not directory:
        return
    _fd = os.open(os.path.join(directory, "progress.%d.json" % rank), os.O_RDWR | os.O_CREAT, 0o644)
    if os.environ.get("HANGSHIM_SCENARIO_STACKS") == "1":
        _stacks_file = open(os.path.join(directory, "stacks.%d.txt" % rank), "w")
        faulthandler.register(signal.SIGUSR1, file=_stacks_file, all_threads=True)
    _write()


def _write():
    _record["events"] = _record.get("events", 0) + 1
    _record["time"] = time.time()
    if _fd is None:
        return
    text = json.dumps(_record, sort_keys=True) + "\n"
    data = text.encode("utf-8")
    os.pwrite(_fd, data + b" " * max(0, _RECORD_BYTES - len(data)), 0)


def caller():
    """(file, line, function, api): the innermost frame outside the library, and the name of the
    library function it called."""
    frame = sys._getframe(1)
    api = None
    while frame is not None and frame.f_code.co_filename in _LIBRARY_FILES:
        api = frame.f_code.co_name
        frame = frame.f_back
    if frame is None:
        return None, 0, None, api
    return os.path.realpath(frame.f_code.co_filename), frame.f_lineno, frame.f_code.co_name, api


def note_init():
    _record["state"] = "ready"
    _write()


def enter(op, group, buf, root=None):
    path, line, function, api = caller()
    key = (path, line)
    _hits[key] = _hits.get(key, 0) + 1
    _record.update({
        "state": "in", "op": op, "api": api, "group": group.name, "group_ranks": group.ranks,
        "seq": group.seq, "count": buf.count, "dtype": DTYPE_NAMES.get(buf.dtype, buf.dtype), "root": root,
        "file": path, "line": line, "function": function, "iteration": _hits[key],
    })
    _record.setdefault("seqs", {})[group.name] = group.seq
    _record.pop("error", None)
    _write()


def leave(group):
    _record["state"] = "out"
    _write()


def failed(message):
    _record["state"] = "failed"
    _record["error"] = message
    _write()


def finished():
    _record["state"] = "finished"
    _write()
