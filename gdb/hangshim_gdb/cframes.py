"""The C frames libpython.py shows among Python frames ("other Python frames"): a C function
called from Python (`<built-in method id of module object at remote 0x...>`), a slot wrapper
(`<method-wrapper '__init__' of MyList object at 0x...>`), waiting for the GIL, garbage
collection. They are recognised by gdb's name of the frame; the function object is read through
gdb's own debug information (the C types of the interpreter), so on a stripped interpreter — no
names, no types — there are none, and the GIL wait comes from pyframes' thread state instead."""
import re

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


# Without gdb's types (a stripped interpreter) the fields are read at the offsets pyframes read
# the process with: its JSON's "object_offsets" (PyObject.ob_type, PyTypeObject.tp_name,
# PyCFunctionObject.m_self; from its generated layout tables, a free-threaded header included),
# so the extension keeps no CPython layout of its own.
_OFFSET_NAMES = ("ob_type", "tp_name", "cfunction_self")


def _read_pointer(address):
    return int.from_bytes(bytes(gdb.selected_inferior().read_memory(address, 8)), "little")


def _read_c_string(address, limit=128):
    raw = bytes(gdb.selected_inferior().read_memory(address, limit))
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


def _usable_offsets(offsets):
    """pyframes' object offsets as ints, or None when the document has none (an older pyframes)."""
    if not isinstance(offsets, dict):
        return None
    values = [offsets.get(name) for name in _OFFSET_NAMES]
    if not all(isinstance(value, int) and value >= 0 for value in values):
        return None
    return dict(zip(_OFFSET_NAMES, values))


def _module_function_repr(name, address, offsets):
    """libpython's repr of a module's built-in function (Python's own is '<built-in function
    NAME>'): '<built-in method NAME of module object at remote 0x...>', m_self read from memory."""
    try:
        function = gdb.Value(address).cast(gdb.lookup_type("PyCFunctionObject").pointer())
        return cfunction_repr(function)
    except (gdb.error, RuntimeError):
        pass  # no debug information for the type (a stripped interpreter): read the fields
    offsets = _usable_offsets(offsets)
    if offsets is None:
        return None  # cannot tell where the fields are
    owner = _read_pointer(address + offsets["cfunction_self"])
    if owner == 0:
        return "<built-in function %s>" % name
    owner_type = _read_c_string(_read_pointer(_read_pointer(owner + offsets["ob_type"]) + offsets["tp_name"]))
    return "<built-in method %s of %s object at remote %#x>" % (name, owner_type, owner)


def libpython_value_repr(value_repr, address, offsets=None):
    """pyframes' repr of a value as libpython.py prints it where the two differ (a module's
    built-in function); `value_repr` unchanged otherwise, when the target cannot be read, or
    when neither gdb's types nor `offsets` (pyframes' "object_offsets" of the process) say where
    the fields are."""
    match = re.match(r"<built-in function ([A-Za-z_][A-Za-z0-9_]*)>$", value_repr or "")
    if match is None or not address:
        return value_repr
    try:
        return _module_function_repr(match.group(1), int(address), offsets) or value_repr
    except (gdb.error, gdb.MemoryError, RuntimeError, ValueError, UnicodeError):
        return value_repr


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
