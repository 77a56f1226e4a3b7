"""Frames with arguments and locals for `pyframes locals` / `pyframes print` in gdb: each of
outer() and inner() records its own f_locals (name -> repr, and whether it is an argument) as
the interpreter sees them, then inner() blocks in stackrecord.hold(). A faulthandler watchdog
thread runs beside it: a native thread with no Python thread state, which `thread apply all
pyframes bt` must still cover. Python 3.6 syntax."""
import faulthandler
import os
import sys

sys.path.insert(0, os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "pyframes", "live",
                                                 "programs")))

import stackrecord  # noqa: E402

CO_VARARGS = 0x04
CO_VARKEYWORDS = 0x08


def locals_of(frame):
    """{name: {"repr", "argument"}} of the frame's bound variables, from the interpreter."""
    code = frame.f_code
    count = code.co_argcount + code.co_kwonlyargcount
    count += 1 if code.co_flags & CO_VARARGS else 0
    count += 1 if code.co_flags & CO_VARKEYWORDS else 0
    arguments = set(code.co_varnames[:count])
    return dict((name, {"repr": repr(value), "argument": name in arguments})
                for name, value in frame.f_locals.items())


def inner(count, label, *rest, **options):
    doubled = count * 2
    negative = -count
    ratio = 3.5
    nothing = None
    flag = True
    text = u"caf\u00e9 \"quoted\""
    raw = b"\x00ab'"
    items = [1, "two", 3.5, None]
    pair = (doubled, "x")
    mapping = {"k": [1, 2]}
    stackrecord.hold("main", locals={"inner": locals_of(sys._getframe()), "outer": locals_of(sys._getframe(1))})


def outer(steps):
    remaining = steps - 1
    name = "outer-" + str(steps)
    inner(remaining * 10, name, 7, "eight", mode="fast")


faulthandler.dump_traceback_later(10 ** 6, exit=False)  # starts the watchdog thread
outer(5)
