"""gdb's own native frames of the selected thread, as plain dicts for native_merge and the
printer: level (gdb's frame number, so `frame N` selects it), name, pc, where (file:line from
debug info, else the shared object), and why the unwinder stopped when that is not the end."""
import gdb

MAX_NATIVE_FRAMES = 4096


def _where(frame):
    try:
        sal = frame.find_sal()
    except gdb.error:
        sal = None
    if sal is not None and sal.symtab is not None and sal.line > 0:
        return "%s:%d" % (sal.symtab.filename, sal.line)
    try:
        solib = gdb.solib_name(frame.pc())
    except gdb.error:
        solib = None
    if solib:
        return solib
    progspace = gdb.current_progspace()
    return progspace.filename if progspace is not None and progspace.filename else ""


def native_frames():
    """(frames, problem): the selected thread's frames innermost first; problem is empty when
    the unwinder reached the outermost frame."""
    frames = []
    problem = ""
    try:
        frame = gdb.newest_frame()
    except gdb.error as error:
        return [], "gdb has no frames for this thread: %s" % error
    while frame is not None:
        if len(frames) >= MAX_NATIVE_FRAMES:
            problem = "more than %d native frames" % MAX_NATIVE_FRAMES
            break
        try:
            name = frame.name()
        except gdb.error:
            name = None
        # The walk starts at the newest frame, so its index is gdb's level (Frame.level() is gdb 11's).
        frames.append({"level": len(frames), "name": name, "pc": frame.pc(), "where": _where(frame)})
        try:
            older = frame.older()
        except gdb.error as error:
            problem = str(error)
            break
        if older is None:
            reason = frame.unwind_stop_reason()
            if reason not in (gdb.FRAME_UNWIND_NO_REASON, gdb.FRAME_UNWIND_OUTERMOST):
                problem = gdb.frame_stop_reason_string(reason)
        frame = older
    return frames, problem
