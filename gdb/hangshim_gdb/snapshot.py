"""The Python stacks of gdb's target, read by `pyframes --json` once per stop and kept until the
target runs again (gdb.events), so `thread apply all pyframes bt` runs pyframes once, not once
per thread. Also the selected Python frame of each thread, which is forgotten at the same time
(as gdb forgets its selected frame when the target resumes)."""
import json
import os
import re
import shutil
import tempfile

import gdb

from . import target as targets
from .tools import PYFRAMES, ToolError, run

_PLAIN_PATH = re.compile(r"^/[A-Za-z0-9_./+-]+$")
READ_TIMEOUT = 120  # seconds; a core of many GiB is read in seconds, a live process in milliseconds


class Snapshot(object):
    def __init__(self, target, process, has_locals, note=None):
        self.target = target
        self.process = process          # one entry of the JSON document's "processes"
        self.has_locals = has_locals
        self.note = note                # how it was read, when that is worth saying

    def threads(self):
        return self.process.get("threads", [])

    def thread_by_lwp(self, lwp):
        for thread in self.threads():
            if lwp and thread.get("native_id") == lwp:
                return thread
        return None


_snapshots = {}     # target key -> Snapshot
_selected = {}      # (target key, native id) -> index of the selected Python frame
_gdb_cores = {}     # target key -> private directory holding a core gdb wrote of the target
_units = {}         # (target key, native id) -> py-up/py-down's unit where gdb's stack is not merged


def forget(*_event):
    """Drops every snapshot, frame selection and core gdb wrote (the target ran, or gdb's target
    changed)."""
    _snapshots.clear()
    _selected.clear()
    _units.clear()
    for directory in _gdb_cores.values():
        shutil.rmtree(directory, ignore_errors=True)
    _gdb_cores.clear()


def connect_events():
    registry = gdb.events
    for name in ("stop", "cont", "exited", "new_objfile", "clear_objfiles", "inferior_call", "memory_changed",
                 "register_changed", "new_inferior", "inferior_deleted", "new_thread", "gdb_exiting"):
        registry_entry = getattr(registry, name, None)
        if registry_entry is not None:
            registry_entry.connect(forget)


def _document_error(completed):
    """The one line pyframes printed for a failed target (it prints exactly one per target)."""
    line = completed.first_error_line()
    if line:
        return line
    return "pyframes: %s exited with status %s and no message" % (" ".join(completed.argv), completed.returncode)


def _parse(completed, what):
    try:
        document = json.loads(completed.stdout)
    except ValueError:
        raise ToolError(_document_error(completed) if completed.returncode != 0 else
                        "pyframes: %s: the output of %s is not JSON (is PYFRAMES a pyframes executable?)"
                        % (what, completed.argv[0]))
    processes = document.get("processes") or []
    if not processes:
        raise ToolError(_document_error(completed))
    return processes[0]


def _core_written_by_gdb(target):
    """A core of the target that gdb writes (its memory as gdb sees it) into a private directory,
    for targets pyframes cannot reach itself: gdbserver's, and live processes pyframes may not
    read (gdb may trace its own child under ptrace_scope=1; pyframes, its sibling, may not). Kept
    until the target runs again, so a second read (with locals) needs no second core."""
    key = target.key()
    if key not in _gdb_cores:
        _gdb_cores[key] = tempfile.mkdtemp(prefix="pyframes-gdb-")
    core = os.path.join(_gdb_cores[key], "core")
    if not _PLAIN_PATH.match(core):
        # generate-core-file takes the rest of its line as the name: keep it unambiguous.
        raise ToolError("pyframes: the temporary directory %s has an unusual name; set TMPDIR to a plain "
                        "directory such as /tmp" % _gdb_cores[key])
    if not os.path.exists(core):
        try:
            gdb.execute("generate-core-file %s" % core, to_string=True)
        except gdb.error as error:
            raise ToolError("pyframes: gdb could not write a core of %s for pyframes to read: %s"
                            % (target.describe(), error))
    return core


def _error_kind(completed):
    """The kind of the failure pyframes reported in its JSON document ("permission_denied", ...)."""
    try:
        errors = json.loads(completed.stdout).get("errors") or []
    except (ValueError, AttributeError):
        return None
    return errors[0].get("kind") if errors and isinstance(errors[0], dict) else None


def _pyframes_json(locals_wanted, where):
    # The variables' read takes the module globals and builtins too: py-print looks there next.
    variables = ["--locals", "--globals"] if locals_wanted else []
    return run(PYFRAMES, ["--json"] + variables + where, READ_TIMEOUT)


def _read(target, locals_wanted):
    note = None
    if target.kind == "live":
        # No --lock: gdb already holds the process stopped (and a second tracer could not attach).
        completed = _pyframes_json(locals_wanted, ["--", str(target.pid)])
        if completed.returncode != 0 and _error_kind(completed) == "permission_denied":
            why = completed.first_error_line()
            completed = _pyframes_json(locals_wanted, target.core_args(_core_written_by_gdb(target)))
            note = "pyframes may not read process %d itself (%s): read from a core gdb wrote of it" % (
                target.pid, why)
    elif target.kind == "core":
        completed = _pyframes_json(locals_wanted, target.core_args(target.core_path))
    else:
        completed = _pyframes_json(locals_wanted, target.core_args(_core_written_by_gdb(target)))
        note = "read from a core gdb wrote of the remote process"
    return Snapshot(target, _parse(completed, target.describe()), locals_wanted, note)


def current(locals_wanted=False):
    """The snapshot of gdb's selected inferior, read now or kept from earlier in this stop."""
    target = targets.current()
    key = target.key()
    snapshot = _snapshots.get(key)
    if snapshot is None or (locals_wanted and not snapshot.has_locals):
        snapshot = _read(target, locals_wanted)
        _snapshots[key] = snapshot
    return snapshot


def selected_lwp():
    thread = gdb.selected_thread()
    if thread is None:
        raise ToolError("pyframes: no thread selected (the target has no threads)")
    return thread.ptid[1] or thread.ptid[0]


def selected_gdb_thread_label():
    thread = gdb.selected_thread()
    return "thread %d (LWP %d)" % (thread.num, thread.ptid[1] or thread.ptid[0])


def thread_of_selected(snapshot):
    """The Python thread running on gdb's selected thread, or ToolError saying there is none."""
    lwp = selected_lwp()
    thread = snapshot.thread_by_lwp(lwp)
    if thread is None:
        raise ToolError("pyframes: gdb's %s has no Python thread state (a thread outside Python, "
                        "or one that has not run Python yet); `pyframes bt --all` shows every Python thread"
                        % selected_gdb_thread_label())
    return thread


def selected_index(snapshot, thread):
    return _selected.get((snapshot.target.key(), thread.get("native_id")), 0)


def select_index(snapshot, thread, index):
    _selected[(snapshot.target.key(), thread.get("native_id"))] = index


def selected_unit(snapshot, thread):
    """(unit index, Python frame index when it was selected), or None."""
    return _units.get((snapshot.target.key(), thread.get("native_id")))


def select_unit(snapshot, thread, selection):
    _units[(snapshot.target.key(), thread.get("native_id"))] = selection
