"""The C frames libpython.py shows among Python frames ("other Python frames"): a C function
called from Python (`<built-in method id of module object at remote 0x...>`), a slot wrapper
(`<method-wrapper '__init__' of MyList object at 0x...>`), waiting for the GIL, garbage
collection. They are recognised by gdb's name of the frame; the function object is read through
gdb's own debug information (the C types of the interpreter), so on a stripped interpreter — no
names, no types — there are none, and the GIL wait comes from pyframes' thread state instead."""
import gdb

WAITING_FOR_GIL = "Waiting for the GIL"
GARBAGE_COLLECTING = "Garbage-collecting"

_GIL_WAITS = ("take_gil",)
_GC_FRAMES = ("collect", "gc_collect_main")
# Functions that call a PyCFunctionObject, by version: 3.6-3.7 fast calls, 3.8+ vectorcalls.
_CFUNCTION_CALLS = ("cfunction_call", "cfunction_call_varargs", "_PyCFunction_FastCallDict",
                    "_PyCFunction_FastCallKeywords")
_CFUNCTION_PREFIX = "cfunction_vectorcall_"
_CFUNCTION_ARGS = ("func", "func_obj")


def _frame_at(level):
    frame = gdb.newest_frame()
    for _ in range(level):
        frame = frame.older()
        if frame is None:
            return None
    return frame


def _c_string(value):
    return value.string("utf-8", "replace")


def _type_name(pointer):
    return _c_string(pointer.cast(gdb.lookup_type("PyObject").pointer()).dereference()["ob_type"]["tp_name"])


def cfunction_repr(value):
    """libpython's repr of a PyCFunctionObject, read through gdb's types."""
    function = value.cast(gdb.lookup_type("PyCFunctionObject").pointer()).dereference()
    name = _c_string(function["m_ml"]["ml_name"])
    owner = function["m_self"]
    if int(owner) == 0:
        return "<built-in function %s>" % name
    return "<built-in method %s of %s object at remote %#x>" % (name, _type_name(owner), int(owner))


def wrapper_repr(value):
    wrapper = value.cast(gdb.lookup_type("wrapperobject").pointer()).dereference()
    name = _c_string(wrapper["descr"]["d_base"]["name"])
    owner = wrapper["self"]
    return "<method-wrapper %r of %s object at %#x>" % (name, _type_name(owner), int(owner))


def _read(level, names, describe, unreadable):
    frame = _frame_at(level)
    if frame is None:
        return unreadable % names[0]
    last = None
    for name in names:
        try:
            value = frame.read_var(name)
        except ValueError:  # no such variable: no debug information for this frame
            continue
        if value.is_optimized_out:
            last = "%s optimized out" % name
            continue
        try:
            return describe(value)
        except (gdb.error, RuntimeError, ValueError) as error:
            last = "%s: %s" % (name, error)
    return unreadable % (last or "%s: missing debuginfos?" % names[0])


def describe(native):
    """The line libpython prints for gdb's frame `native` (a gdb_native dict), or None."""
    name = native.get("name") or ""
    if not name:
        return None
    if name in _GIL_WAITS:
        return WAITING_FOR_GIL
    if name in _GC_FRAMES:
        return GARBAGE_COLLECTING
    if name.startswith(_CFUNCTION_PREFIX) or name in _CFUNCTION_CALLS:
        return _read(native["level"], _CFUNCTION_ARGS, cfunction_repr, "PyCFunction invocation (unable to read %s)")
    if name == "wrapper_call":
        return _read(native["level"], ("wp",), wrapper_repr, "<wrapper_call invocation (unable to read %s)>")
    return None
