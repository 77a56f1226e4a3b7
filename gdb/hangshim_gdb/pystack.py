"""The stack as libpython.py's commands walk it: gdb's frames, innermost first, of which some are
"Python frames" — each call of the evaluation loop (_PyEval_EvalFrameDefault), holding the run
of Python frames it executed (one frame up to 3.10; from 3.11 the frames up to and including an
entry frame), and the C frames libpython shows in a Python traceback (a C function called from
Python, waiting for the GIL, garbage collection; see cframes.py).

Python frames come from pyframes' snapshot; which gdb frame ran them from pyframes' merge of
the two stacks (native_merge.py). Where gdb's stack cannot be merged (a stripped interpreter has
no _PyEval_EvalFrameDefault symbol, a core without the stack's pages), every run is a unit with
no gdb frame, and py-up/py-down keep their own selection instead of gdb's selected frame."""
import gdb

from . import cframes, gdb_native, native_merge
from . import snapshot as snapshots


class Unit(object):
    """One Python frame in libpython's sense: kind "eval" (frames: indices into the thread's
    frames, innermost first) or "other" (info: the line libpython prints for it). level is
    gdb's frame number, or None when the stacks were not merged."""

    def __init__(self, kind, level, frames=(), info=None):
        self.kind = kind
        self.level = level
        self.frames = list(frames)
        self.info = info


def runs(frames):
    """The thread's frames split into evaluation-loop runs: each ends at an entry frame."""
    out, current = [], []
    for index, frame in enumerate(frames):
        current.append(index)
        if frame.get("entry"):
            out.append(current)
            current = []
    if current:
        out.append(current)
    return out


def _gil_marker(thread):
    return thread.get("state") == "waiting_for_gil"


def _unmerged(thread):
    units = [Unit("eval", None, run) for run in runs(thread.get("frames", []))]
    if _gil_marker(thread):
        units.insert(0, Unit("other", None, info=cframes.WAITING_FOR_GIL))
    return units


def units_of(thread):
    """(units innermost first, merged): merged says the units carry gdb's frame numbers."""
    frames = thread.get("frames", [])
    native, problem = gdb_native.native_frames()
    if not native or not frames:
        return _unmerged(thread), False
    try:
        merged, _note = native_merge.merge(thread, native, problem)
    except Exception:  # noqa: BLE001 - no merge is the fallback, never an error of its own
        merged = None
    if merged is None:
        return _unmerged(thread), False
    units = []
    last_level = -1
    runs_since_native = 0
    current = None
    for kind, item in merged:
        if kind == "native":
            last_level, runs_since_native, current = item["level"], 0, None
            info = cframes.describe(item)
            # One call can pass through two such C frames (3.6: _PyCFunction_FastCallKeywords
            # calls _PyCFunction_FastCallDict): libpython shows the call once.
            if info and not (units and units[-1].kind == "other" and units[-1].info == info):
                units.append(Unit("other", item["level"], info=info))
            continue
        if current is None:
            # The evaluation-loop frame this run replaced follows the last native frame.
            runs_since_native += 1
            current = Unit("eval", last_level + runs_since_native)
            units.append(current)
        current.frames.append(item)
        if frames[item].get("entry"):
            current = None
    # Without gdb's name of the wait (a stripped interpreter), pyframes' thread state says it: the
    # marker takes gdb's innermost frame, below the first evaluation loop (never at its level,
    # or py-up from the marker would select it again).
    if (_gil_marker(thread) and units and units[0].level > 0
            and not any(u.info == cframes.WAITING_FOR_GIL for u in units)):
        units.insert(0, Unit("other", 0, info=cframes.WAITING_FOR_GIL))
    return units, True


def gdb_frame_at(level):
    frame = gdb.newest_frame()
    for _ in range(level):
        older = frame.older()
        if older is None:
            break
        frame = older
    return frame


def _selected_level():
    try:
        selected = gdb.selected_frame()
        if hasattr(selected, "level"):
            return selected.level()
        # gdb before 11 (Ubuntu 20.04's 9, Debian 11's 10) has no Frame.level: count from the newest.
        level, frame = 0, gdb.newest_frame()
        while frame is not None and frame != selected:
            frame, level = frame.older(), level + 1
        return level if frame is not None else 0
    except gdb.error:
        return 0


class Stack(object):
    """The selected thread's units and which of them is selected (libpython: the first Python
    frame at or above gdb's selected frame)."""

    def __init__(self, snapshot, thread):
        self.snapshot = snapshot
        self.thread = thread
        # gdb's frames do not change until the target runs again, when the snapshot is dropped:
        # the merge (a pyframes run) is made once per thread and snapshot.
        cache = snapshot.__dict__.setdefault("libpython_units", {})
        key = thread.get("native_id")
        if key not in cache:
            cache[key] = units_of(thread)
        self.units, self.merged = cache[key]

    def frame(self, index):
        return self.thread["frames"][index]

    def selected(self):
        """Index into units of the selected unit, or None (no Python frame at or above)."""
        if not self.units:
            return None
        if not self.merged:
            return self._own_selection()
        level = _selected_level()
        for index, unit in enumerate(self.units):
            if unit.level >= level:
                return index
        return None

    def select(self, index):
        unit = self.units[index]
        if self.merged:
            gdb_frame_at(unit.level).select()
        else:
            frame = self._frame_of_unit(index)
            snapshots.select_index(self.snapshot, self.thread, frame)
            snapshots.select_unit(self.snapshot, self.thread, (index, frame))

    def _frame_of_unit(self, index):
        """The Python frame `pyframes frame` shows for a unit: its innermost, or for a C frame
        the Python frame that called it."""
        for unit in self.units[index:]:
            if unit.frames:
                return unit.frames[0]
        return len(self.thread.get("frames", [])) - 1

    def _own_selection(self):
        """Without gdb's frames, py-up/py-down's selection is kept with `pyframes frame`'s: a
        move of the pyframes commands since (pyframes frame 0, up, down) moves it too."""
        stored = snapshots.selected_unit(self.snapshot, self.thread)
        frame = snapshots.selected_index(self.snapshot, self.thread)
        if stored is not None and stored[1] == frame and stored[0] < len(self.units):
            return stored[0]
        for index, unit in enumerate(self.units):
            if frame in unit.frames:
                return 0 if frame == 0 else index  # frame 0: from the innermost unit, a marker too
        return 0

    def selected_eval(self):
        """The first evaluation-loop unit at or above the selection (py-list's), or None."""
        index = self.selected()
        if index is None:
            return None
        for unit in self.units[index:]:
            if unit.kind == "eval":
                return unit
        return None

    def variables_unit(self):
        """The unit whose innermost Python frame py-print and py-locals read: the selected one,
        or for a C frame the Python frame that called it."""
        return self.selected_eval()


def current(locals_wanted=False):
    """The Stack of gdb's selected thread, or None when it has no Python thread state."""
    snapshot = snapshots.current(locals_wanted=locals_wanted)
    thread = snapshot.thread_by_lwp(snapshots.selected_lwp())
    if thread is None:
        return None
    return Stack(snapshot, thread)
