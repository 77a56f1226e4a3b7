"""py-bt, py-bt-full, py-list, py-up, py-down, py-locals and py-print with libpython.py's output
and semantics, defined only where libpython.py (or anything else) has not defined the name: loading
both keeps libpython's.

Semantics (those of libpython.py): a "Python frame" is a call of the evaluation loop with the
Python frames it ran, or a C frame libpython shows (pystack.py, cframes.py). The selected one is
the first at or above gdb's selected frame; py-up/py-down select gdb's frame of the next one
(where gdb's stack cannot be merged with pyframes', e.g. a stripped interpreter, they keep their
own selection). At the ends they print 'Unable to find an older python frame' / '... newer ...'
and are no gdb error. py-print and py-locals read the innermost Python frame of the selected run
(for a C frame: the Python frame that called it). Failures to read the target stay one-line gdb
errors, as in the pyframes commands."""
import re

import gdb

from . import cframes
from . import libpython_text as text
from . import pystack
from .frames_text import Sources, printable
from .tools import ToolError
from .views import snapshot_notes

NO_FRAME = "Unable to locate python frame"


def _write(lines):
    for line in lines:
        gdb.write(line + "\n")


class _LibpythonCommand(gdb.Command):
    def invoke(self, argument, from_tty):
        try:
            self.run(argument)
        except ToolError as error:
            raise gdb.GdbError(printable(str(error)))


def _walk_lines(summary):
    stack = pystack.current(locals_wanted=summary)
    if stack is None or stack.selected() is None:
        return [NO_FRAME]
    sources = Sources(stack.snapshot.target)
    lines = snapshot_notes(stack.snapshot)
    if not summary:
        lines.append("Traceback (most recent call first):")
    for unit in stack.units[stack.selected():]:
        lines += text.summary_lines(stack, unit, sources) if summary else text.traceback_lines(stack, unit, sources)
    if stack.thread.get("truncated"):
        lines.append(text.truncation_line(stack.thread, summary))
    return lines


class PyBacktrace(_LibpythonCommand):
    """Print the Python traceback from the selected Python frame out, innermost first.

libpython.py's py-bt, read by pyframes (works on stripped interpreters): 'Traceback (most recent
call first):', then '  File "F", line N, in NAME' and the source line per Python frame, and the
C functions, GIL waits and garbage collections libpython shows, from gdb's selected frame out."""

    def __init__(self):
        super(PyBacktrace, self).__init__("py-bt", gdb.COMMAND_STACK, gdb.COMPLETE_NONE)

    def run(self, argument):
        _write(_walk_lines(summary=False))


class PyBacktraceFull(_LibpythonCommand):
    """Print the Python frames from the selected one out, with their variables.

libpython.py's py-bt-full: '#N Frame 0xADDR, for file F, line N, in NAME (a=1, b=2)' per Python
frame (N: gdb's frame number of its evaluation loop) and the source line."""

    def __init__(self):
        super(PyBacktraceFull, self).__init__("py-bt-full", gdb.COMMAND_STACK, gdb.COMPLETE_NONE)

    def run(self, argument):
        _write(_walk_lines(summary=True))


_ONE = re.compile(r"\s*(\d+)\s*")
_TWO = re.compile(r"\s*(\d+)\s*,\s*(\d+)\s*")


class PyList(_LibpythonCommand):
    """Print the source around the current line of the selected Python frame (libpython.py's py-list).

Usage: py-list              five lines either side of the current line, marked '>'
       py-list START        lines START to START+10
       py-list START,END    lines START to END"""

    def __init__(self):
        super(PyList, self).__init__("py-list", gdb.COMMAND_FILES, gdb.COMPLETE_NONE)

    def run(self, argument):
        start = end = None
        one, two = _ONE.match(argument), _TWO.match(argument)
        if one:
            start = int(one.group(1))
            end = start + 10
        if two:
            start, end = int(two.group(1)), int(two.group(2))
        stack = pystack.current()
        unit = stack.selected_eval() if stack is not None else None
        if unit is None or not unit.frames:
            gdb.write("Unable to locate gdb frame for python bytecode interpreter\n")
            return
        frame = stack.frame(unit.frames[0])
        line = frame.get("line") or 0
        if line <= 0:
            gdb.write("Unable to read python frame line number\n")
            return
        if start is None:
            start, end = line - 5, line + 5
        lines = Sources(stack.snapshot.target).lines(frame.get("file"))
        if lines is None:
            gdb.write("Unable to open %s: not readable on this machine\n" % printable(frame.get("file")))
            return
        _write(text.listing_lines(lines, max(start, 1), end, line))


def _move(up):
    stack = pystack.current(locals_wanted=True)
    index = stack.selected() if stack is not None else None
    if index is None:
        gdb.write(NO_FRAME + "\n")
        return
    target = index + (1 if up else -1)
    if target < 0 or target >= len(stack.units):
        gdb.write("Unable to find an older python frame\n" if up else "Unable to find a newer python frame\n")
        return
    stack.select(target)
    _write(text.summary_lines(stack, stack.units[target], Sources(stack.snapshot.target)))


class _PyMove(_LibpythonCommand):
    """py-up and py-down: one command, moving older (up) or newer; each subclass carries its help."""

    def __init__(self, name, up):
        super(_PyMove, self).__init__(name, gdb.COMMAND_STACK, gdb.COMPLETE_NONE)
        self._up = up

    def run(self, argument):
        _move(up=self._up)


class PyUp(_PyMove):
    """Select the next older Python frame and print it (libpython.py's py-up).

Prints every Python frame its evaluation loop ran, as py-bt-full does; at the outermost one,
'Unable to find an older python frame'."""

    def __init__(self):
        super(PyUp, self).__init__("py-up", up=True)


class PyDown(_PyMove):
    """Select the next newer Python frame and print it (libpython.py's py-down).

Prints every Python frame its evaluation loop ran, as py-bt-full does; at the innermost one,
'Unable to find a newer python frame'."""

    def __init__(self):
        super(PyDown, self).__init__("py-down", up=False)


def _variables_unit():
    """The stack and the selected evaluation-loop run whose variables py-print and py-locals show;
    (None, None) after writing libpython.py's words for why there is none."""
    stack = pystack.current(locals_wanted=True)
    if stack is None or stack.selected() is None:
        gdb.write(NO_FRAME + "\n")
        return None, None
    unit = stack.variables_unit()
    if unit is None or not unit.frames:
        gdb.write("Unable to read information on python frame\n")
        return None, None
    return stack, unit


class PyPrint(_LibpythonCommand):
    """Print one variable of the selected Python frame (libpython.py's py-print).

Usage: py-print NAME
Looks in the innermost Python frame of the selected evaluation-loop run: its local variables,
then its module's globals and the builtins where pyframes read them ("local 'c' = 3")."""

    def __init__(self):
        super(PyPrint, self).__init__("py-print", gdb.COMMAND_DATA, gdb.COMPLETE_NONE)

    def run(self, argument):
        name = str(argument)
        stack, unit = _variables_unit()
        if stack is None:
            return
        frame = stack.frame(unit.frames[0])
        for scope, key in (("local", "locals"), ("global", "globals"), ("builtin", "builtins")):
            for variable in frame.get(key, []):
                if variable.get("name") == name:
                    value = cframes.libpython_value_repr(variable.get("repr"), variable.get("address"),
                                                         stack.snapshot.process.get("object_offsets"))
                    gdb.write("%s %s = %s\n" % (scope, printable(repr(name)), text.truncated(value)))
                    return
        scopes = "locals" if "globals" not in frame else "locals, globals and builtins"
        gdb.write("%s not found (pyframes read the frame's %s)\n" % (printable(repr(name)), scopes))


class PyLocals(_LibpythonCommand):
    """Print the variables of the selected Python frame.

libpython.py's py-locals: 'NAME = REPR' per variable of the selected Python frame; from 3.11 the
frames of its evaluation-loop run, each under 'Locals for NAME'."""

    def __init__(self):
        super(PyLocals, self).__init__("py-locals", gdb.COMMAND_DATA, gdb.COMPLETE_NONE)

    def run(self, argument):
        stack, unit = _variables_unit()
        if stack is None:
            return
        _write(text.locals_lines(stack, unit))


COMMANDS = (("py-bt", PyBacktrace), ("py-bt-full", PyBacktraceFull), ("py-list", PyList), ("py-up", PyUp),
            ("py-down", PyDown), ("py-print", PyPrint), ("py-locals", PyLocals))


def define(defined):
    """Defines each command `defined(name)` says is not there yet; returns the names made."""
    made = []
    for name, command in COMMANDS:
        if not defined(name):
            command()
            made.append(name)
    return made
