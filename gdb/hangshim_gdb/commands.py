"""The gdb commands: `pyframes bt|list|up|down|frame|locals|print|ledger`, and libpython.py's py-*
commands where that file has not defined them (libpython_commands.py). Each command is thin: it parses its
argument, asks views/ledger for lines and prints them; every failure is one line (gdb.GdbError)."""
import gdb

from . import ledger, libpython_commands, tools, views
from . import snapshot as snapshots
from .frames_text import Sources, listing, printable
from .parsing import UsageError, parse_count, parse_frame_number, parse_list_range
from .tools import ToolError


def _write(lines):
    for line in lines:
        gdb.write(line + "\n")


class _Command(gdb.Command):
    """Runs the subclass's `run(argument)` and turns the extension's errors into gdb errors (one
    line each)."""

    def invoke(self, argument, from_tty):
        try:
            self.run(argument)
        except (ToolError, UsageError) as error:
            raise gdb.GdbError(printable(str(error)))


class PyframesPrefix(gdb.Command):
    """Python stacks of the process or core gdb is debugging, read by pyframes' engine.

Works on stripped interpreters and {versions}, without python-dbg or
libpython.py: the pyframes executable reads the interpreter's state from the process (gdb
keeps it stopped) or from the core file gdb loaded.

  pyframes bt [--all] [--native]   the selected thread's Python stack (every thread's with --all)
  pyframes list [LINE | START,END] source around the selected Python frame's line
  pyframes up [N] / down [N]       select an older / newer Python frame
  pyframes frame [N]               select Python frame N (the numbers of pyframes bt)
  pyframes locals                  arguments and local variables of the selected Python frame
  pyframes print NAME              one of them
  pyframes ledger [--json]         the hangshim ledger in the target's memory

Commands follow gdb's selected thread and work under `thread apply all`. The stacks are read
once per stop. Set PYFRAMES (and HANGSHIM_CLI) to the executables if they are not found."""

    def __init__(self):
        super(PyframesPrefix, self).__init__("pyframes", gdb.COMMAND_STACK, gdb.COMPLETE_NONE, True)

    def invoke(self, argument, from_tty):
        if argument.strip():
            raise gdb.GdbError("pyframes: unknown subcommand %r (see help pyframes)" % argument.strip())
        gdb.execute("help pyframes", from_tty)


class Backtrace(_Command):
    """Print the Python stack of gdb's selected thread, innermost frame first.

Usage: pyframes bt [--all] [--native]

  #N  function (file:line)   one line per Python frame (qualified names from 3.11), the source
                             line under it when the file is readable here
  --all      every Python thread, each under a "Thread N (LWP L) "name":" header
  --native   gdb's native frames too, with the Python frames put in at the interpreter's
             evaluation-loop frames (_PyEval_EvalFrameDefault): native lines carry gdb's frame
             numbers (#N), Python lines pyframes' (py#N). When the counts do not match, both
             stacks are printed, with a note, rather than a guess.

`thread apply all pyframes bt` prints each thread's stack; pyframes runs once per stop."""

    def __init__(self):
        super(Backtrace, self).__init__("pyframes bt", gdb.COMMAND_STACK, gdb.COMPLETE_NONE)

    def run(self, argument):
        words = gdb.string_to_argv(argument)
        unknown = [w for w in words if w not in ("--all", "--native", "-a", "-n")]
        if unknown:
            raise UsageError("pyframes bt: unknown argument %r (usage: pyframes bt [--all] [--native])" % unknown[0])
        native = "--native" in words or "-n" in words
        every = "--all" in words or "-a" in words
        _write(views.bt_all(native) if every else views.bt_selected(native))


class List(_Command):
    """List the source around the selected Python frame's current line, marked with '>'.

Usage: pyframes list            five lines either side of the current line
       pyframes list LINE       five lines either side of LINE
       pyframes list START,END  lines START to END
The file is read on this machine (a live process's relative paths in its working directory)."""

    def __init__(self):
        super(List, self).__init__("pyframes list", gdb.COMMAND_FILES, gdb.COMPLETE_NONE)

    def run(self, argument):
        snapshot, _thread, _index, frame = views.selected_frame()
        first, last = parse_list_range(argument, frame.get("line") or 0)
        lines = listing(frame, first, last, Sources(snapshot.target))
        if lines is None:
            raise ToolError("pyframes list: the source of %s is not readable here (a frozen or generated module, "
                            "or a file not on this machine)" % printable(frame.get("file")))
        if not lines:
            raise ToolError("pyframes list: %s has no line %d" % (printable(frame.get("file")), first))
        _write(lines)


class _Move(_Command):
    direction = 0  # +1: outwards (older), -1: inwards (newer)

    def run(self, argument):
        count = parse_count(argument, "pyframes %s" % self.name_word)
        snapshot, thread, index, _frame = views.selected_frame()
        frames = thread["frames"]
        target = index + self.direction * count
        if target < 0:
            if index == 0:
                raise ToolError("Bottom (innermost) Python frame selected; you cannot go down.")
            target = 0
        if target >= len(frames):
            if index == len(frames) - 1:
                raise ToolError("Initial (outermost) Python frame selected; you cannot go up.")
            target = len(frames) - 1
        snapshots.select_index(snapshot, thread, target)
        _write(views.show_frame(snapshot, target, frames[target]))


class Up(_Move):
    """Select the Python frame that called the selected one (an older frame) and print it.

Usage: pyframes up [N]   N frames up (default 1)"""
    direction = 1
    name_word = "up"

    def __init__(self):
        super(Up, self).__init__("pyframes up", gdb.COMMAND_STACK, gdb.COMPLETE_NONE)


class Down(_Move):
    """Select the Python frame the selected one called (a newer frame) and print it.

Usage: pyframes down [N]   N frames down (default 1)"""
    direction = -1
    name_word = "down"

    def __init__(self):
        super(Down, self).__init__("pyframes down", gdb.COMMAND_STACK, gdb.COMPLETE_NONE)


class Frame(_Command):
    """Select Python frame N (the numbers pyframes bt prints) and print it.

Usage: pyframes frame [N]
Without N, print the selected Python frame of gdb's selected thread."""

    def __init__(self):
        super(Frame, self).__init__("pyframes frame", gdb.COMMAND_STACK, gdb.COMPLETE_NONE)

    def run(self, argument):
        snapshot, thread, index, frame = views.selected_frame()
        if argument.strip():
            wanted = parse_frame_number(argument)
            frames = thread["frames"]
            if wanted >= len(frames):
                raise ToolError("pyframes frame: no Python frame #%d (this thread has #0-#%d)"
                                % (wanted, len(frames) - 1))
            snapshots.select_index(snapshot, thread, wanted)
            index, frame = wanted, frames[wanted]
        _write(views.show_frame(snapshot, index, frame))


def _locals_of_selected():
    """(title, locals) of the selected Python frame, read with --locals (once per stop)."""
    _snapshot, thread, index, frame = views.selected_frame()
    with_locals = snapshots.current(locals_wanted=True)
    same_thread = with_locals.thread_by_lwp(thread.get("native_id"))
    frames = same_thread.get("frames", []) if same_thread else []
    if index >= len(frames) or any(frames[index].get(k) != frame.get(k) for k in ("function", "file", "line")):
        raise ToolError("pyframes locals: the stack changed between two reads (is the process running? "
                        "stop it, e.g. with Ctrl-C or `interrupt`)")
    return views.frame_title(index, frame), frames[index].get("locals", [])


class Locals(_Command):
    """Print the arguments and local variables of the selected Python frame.

Usage: pyframes locals
One line per variable, "NAME = REPR", arguments first and marked "(arg)". Values are read from
the target and shown like Python's repr(), bounded in length; objects pyframes cannot show are
"<TYPE object at 0x...>"."""

    def __init__(self):
        super(Locals, self).__init__("pyframes locals", gdb.COMMAND_DATA, gdb.COMPLETE_NONE)

    def run(self, argument):
        if argument.strip():
            raise UsageError("pyframes locals takes no argument (use pyframes print NAME for one variable)")
        _title, variables = _locals_of_selected()
        if not variables:
            gdb.write("No locals.\n")
            return
        ordered = [v for v in variables if v.get("argument")] + [v for v in variables if not v.get("argument")]
        _write(["%s%s = %s" % ("(arg) " if v.get("argument") else "", printable(v.get("name")),
                                printable(v.get("repr"))) for v in ordered])


class Print(_Command):
    """Print one argument or local variable of the selected Python frame.

Usage: pyframes print NAME
Shows "NAME = REPR" as pyframes locals does. Only the frame's own variables are read: not
globals, attributes or expressions."""

    def __init__(self):
        super(Print, self).__init__("pyframes print", gdb.COMMAND_DATA, gdb.COMPLETE_NONE)

    def run(self, argument):
        name = argument.strip()
        if not name:
            raise UsageError("pyframes print: which variable? (usage: pyframes print NAME)")
        title, variables = _locals_of_selected()
        for variable in variables:
            if variable.get("name") == name:
                gdb.write("%s = %s\n" % (printable(name), printable(variable.get("repr"))))
                return
        raise ToolError("pyframes print: no argument or local variable %r in %s (only the frame's own "
                        "variables are read, not globals or expressions)" % (name, title))


class Ledger(_Command):
    """Print the hangshim ledger kept in the target's memory.

Usage: pyframes ledger [--json] [--records N | --all] [--save FILE]

For processes run with LD_PRELOAD=libhangshim.so: who the process is, its communicators and
counters, its last NCCL calls and their Python call-sites, printed by `hangshim ledger`.

The options before --save are those of `hangshim ledger`; --save FILE also writes the ledger's
bytes to FILE (a new file, 0600), for `hangshim report`. On a core the ledger's pages are
usually absent (cores leave shared file mappings out unless bit 3 of /proc/PID/coredump_filter
is set): the file the mapping names is read instead when it still exists, with a note."""

    def __init__(self):
        super(Ledger, self).__init__("pyframes ledger", gdb.COMMAND_STATUS, gdb.COMPLETE_FILENAME)

    def run(self, argument):
        words = gdb.string_to_argv(argument)
        passed, save = [], None
        i = 0
        while i < len(words):
            word = words[i]
            if word in ("--json", "--all"):
                passed.append(word)
            elif word in ("--records", "--save"):
                if i + 1 >= len(words):
                    raise UsageError("pyframes ledger: %s needs a value" % word)
                i += 1
                if word == "--save":
                    save = words[i]
                else:
                    passed += [word, words[i]]
            else:
                raise UsageError("pyframes ledger: unknown argument %r (usage: pyframes ledger [--json] "
                                 "[--records N | --all] [--save FILE])" % word)
            i += 1
        ledger.show(passed, save)


def _defined(command):
    try:
        gdb.execute("help %s" % command, to_string=True)
        return True
    except gdb.error:
        return False


def _versions_phrase():
    """`help pyframes`' words for the versions read, from `pyframes --version`."""
    versions = tools.supported_versions()
    if versions:
        return "any CPython %s (pyframes --version)" % versions
    return "every CPython version `pyframes --version` names"


def define():
    PyframesPrefix.__doc__ = PyframesPrefix.__doc__.replace("{versions}", _versions_phrase())
    PyframesPrefix()
    Backtrace()
    List()
    Up()
    Down()
    Frame()
    Locals()
    Print()
    Ledger()
    # libpython.py's commands, in its formats, only where it (or anything else) has not defined
    # them: loading both keeps libpython's.
    return libpython_commands.define(_defined)
