"""What the stack commands print, built from a snapshot (snapshot.py) and, for --native, gdb's
own frames. Each function returns lines; commands.py writes them."""
import gdb

from . import gdb_native, native_merge
from . import snapshot as snapshots
from .frames_text import Sources, frame_block, frame_line, printable
from .tools import ToolError

NATIVE_LABEL_WIDTH = 4


def thread_state(thread):
    state = thread.get("state", "unknown")
    words = {"running": "running", "waiting_for_gil": "waiting for the GIL", "idle": "idle"}.get(state, "")
    if thread.get("gil"):
        words = words + ", holds the GIL" if words else "holds the GIL"
    return words


def thread_header(thread, gdb_thread=None):
    """'Thread 2 (LWP 5739) "worker" (holds the GIL):' with gdb's thread number when known."""
    if gdb_thread is not None:
        title = "Thread %d (LWP %d)" % (gdb_thread.num, thread.get("native_id"))
    elif thread.get("native_id"):
        title = "Python thread LWP %d (not one of gdb's threads)" % thread.get("native_id")
    else:
        title = "Python thread %#x (LWP unknown)" % thread.get("thread_id", 0)
    if thread.get("name"):
        title += ' "%s"' % printable(thread["name"])
    state = thread_state(thread)
    if state:
        title += " (%s)" % state
    return title + ":"


def snapshot_notes(snapshot):
    """Notes about the whole read (warnings of pyframes, how it was read), once per snapshot."""
    if getattr(snapshot, "notes_shown", False):
        return []
    snapshot.notes_shown = True
    lines = []
    if snapshot.note:
        lines.append("note: %s" % snapshot.note)
    for warning in snapshot.process.get("warnings", []):
        lines.append("warning: %s" % printable(warning))
    return lines


def python_lines(thread, sources):
    frames = thread.get("frames", [])
    lines = []
    for index, frame in enumerate(frames):
        lines += frame_block("#%d" % index, frame, sources)
    if not frames and not thread.get("truncated"):
        lines.append("(no Python frames)")
    if thread.get("truncated"):
        lines.append("... truncated: %s" % printable(thread.get("truncation_reason") or "frame chain cut"))
    return lines


def native_line(frame):
    name = printable(frame.get("name")) or "0x%016x in ??" % frame.get("pc", 0)
    where = printable(frame.get("where"))
    label = "#%d" % frame.get("level", 0)
    return "%-*s [native] %s%s" % (NATIVE_LABEL_WIDTH, label, name, " (%s)" % where if where else "")


def merged_lines(thread, sources):
    """The selected gdb thread's native frames with its Python frames merged in by pyframes (see
    native_merge.py): native lines carry gdb's frame numbers (#N), Python ones pyframes' (py#N)."""
    python = thread.get("frames", [])
    native, problem = gdb_native.native_frames()
    merged, note = native_merge.merge(thread, native, problem)
    if merged is None:
        lines = python_lines(thread, sources)
        lines.append("... %s" % printable(note or "native stack not merged"))
        lines.append("native frames:")
        lines += [native_line(frame) for frame in native]
        return lines
    lines = []
    for kind, item in merged:
        if kind == "native":
            lines.append(native_line(item))
        else:
            lines += frame_block("py#%d" % item, python[item], sources)
    if note:
        lines.append("... %s" % printable(note))
    return lines


def thread_lines(snapshot, thread, native):
    sources = Sources(snapshot.target)
    return merged_lines(thread, sources) if native else python_lines(thread, sources)


def _selected_frame():
    try:
        return gdb.selected_frame()
    except gdb.error:  # a thread with no stack
        return None


def gdb_threads_in_order():
    inferior = gdb.selected_inferior()
    return sorted(inferior.threads(), key=lambda t: t.num)


def bt_selected(native):
    snapshot = snapshots.current()
    lines = snapshot_notes(snapshot)
    lwp = snapshots.selected_lwp()
    thread = snapshot.thread_by_lwp(lwp)
    if thread is None:
        lines.append("No Python frames in gdb's %s: it has no Python thread state (a thread outside Python)."
                     % snapshots.selected_gdb_thread_label())
        if native:
            lines += [native_line(frame) for frame in gdb_native.native_frames()[0]]
        return lines
    return lines + thread_lines(snapshot, thread, native)


def bt_all(native):
    """Every Python thread, in gdb's thread order, then Python threads gdb does not list."""
    snapshot = snapshots.current()
    lines = snapshot_notes(snapshot)
    shown = set()
    original = gdb.selected_thread()
    original_frame = _selected_frame() if native and original is not None else None
    try:
        for gdb_thread in gdb_threads_in_order():
            thread = snapshot.thread_by_lwp(gdb_thread.ptid[1] or gdb_thread.ptid[0])
            if thread is None:
                continue
            shown.add(id(thread))
            if lines:
                lines.append("")
            lines.append(thread_header(thread, gdb_thread))
            if native:
                gdb_thread.switch()
            lines += ["    " + line for line in thread_lines(snapshot, thread, native)]
    finally:
        if original is not None and original.is_valid():
            original.switch()
            if original_frame is not None and original_frame.is_valid():
                original_frame.select()  # switching threads selected each one's newest frame
    for thread in snapshot.threads():
        if id(thread) in shown:
            continue
        if lines:
            lines.append("")
        lines.append(thread_header(thread))
        lines += ["    " + line for line in thread_lines(snapshot, thread, False)]
    if not snapshot.threads():
        lines.append("No Python threads in %s." % snapshot.target.describe())
    return lines


def selected_frame():
    """(snapshot, thread, index, frame) of the selected Python frame of gdb's selected thread."""
    snapshot = snapshots.current()
    thread = snapshots.thread_of_selected(snapshot)
    frames = thread.get("frames", [])
    if not frames:
        raise ToolError("pyframes: gdb's %s runs no Python code now (no Python frames)"
                                  % snapshots.selected_gdb_thread_label())
    index = min(snapshots.selected_index(snapshot, thread), len(frames) - 1)
    return snapshot, thread, index, frames[index]


def show_frame(snapshot, index, frame):
    return frame_block("#%d" % index, frame, Sources(snapshot.target))


def frame_title(index, frame):
    return frame_line("#%d" % index, frame)
