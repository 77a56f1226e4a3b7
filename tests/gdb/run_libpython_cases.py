"""CPython's own gdb tests (Lib/test/test_gdb: test_backtrace.py, test_misc.py), adapted to run
against the extension's py-* commands with libpython.py NOT loaded:

    run_libpython_cases.py --python PY --loader build/gdb/pyframes-gdb.py [--cases all|basic]

Each case keeps the original's program, breakpoint, commands and expected text (its regular
expression or ending); what differs is how they run: one gdb session per program runs many cases
(`frame 0` between them gives back the state a fresh session has: libpython's selection is gdb's
selected frame), to keep the time small.

The stop is the originals' `break builtin_id` (id(42) in the sample) where the interpreter has
symbols (pyenv builds). A stripped interpreter (Debian's static /usr/bin/python3.11) has no
builtin_id: the sample then binds id to time.sleep (line 2, blank in the original, so every line
number stays) and gdb stops in libc's clock_nanosleep. Cases that need the interpreter's debug
information, as libpython needs it (the C functions in a traceback, wrapper_call, update_refs),
run only where the interpreter has it.

--cases basic runs the sample's cases only (test_bt, test_bt_full, PyListTests, the navigation
and print/locals cases of the sample); all adds the C-call sample (test_pyup_command,
test_up_then_down, PyPrintTests.test_basic_command/test_print_after_up, 3.8+ where
_testcapi.pyobject_vectorcall exists) and test_threads.

Where libpython.py itself differs by version, so does the expectation (see EXPECTED below)."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "pyframes", "live"))
sys.path.insert(0, os.path.join(HERE, "..", "pyframes", "core"))

import gdb_session as gs  # noqa: E402

PROGRAMS = os.path.join(HERE, "programs")
SAMPLE = os.path.join(PROGRAMS, "gdb_sample.py")
C_CALL = os.path.join(PROGRAMS, "libpython_c_call.py")
THREADS = os.path.join(PROGRAMS, "libpython_threads.py")
STRIPPED_LINE_2 = "from time import sleep as id  # a stripped interpreter stops in clock_nanosleep\n"


def version_of(python):
    out = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                         stdout=subprocess.PIPE, check=True).stdout.decode().strip()
    return tuple(int(p) for p in out.split("."))


def interpreter_files(python):
    """The executable and the libpython beside it (lib/libpython3*.so.*), where there is one."""
    candidates = [os.path.realpath(python)]
    lib = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(python))), "lib")
    if os.path.isdir(lib):
        candidates += [os.path.join(lib, n) for n in os.listdir(lib) if n.startswith("libpython3") and ".so." in n]
    return candidates


def has_symbols(python):
    """True when gdb can stop at builtin_id: the executable or its libpython has a symbol table."""
    for path in interpreter_files(python):
        done = subprocess.run(["nm", path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        if re.search(rb" t builtin_id$", done.stdout, re.MULTILINE):
            return True
    return False


def has_debug_info(python):
    """True when the executable or its libpython carries DWARF (.debug_info): what libpython.py,
    and the extension's description of C-call frames, read types from. The builds
    scripts/build-pythons.sh makes have symbols but no debug information."""
    for path in interpreter_files(python):
        done = subprocess.run(["readelf", "-S", "-W", path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        if b" .debug_info " in done.stdout:
            return True
    return False


def has_pyobject_vectorcall(python):
    return subprocess.run([python, "-c", "from _testcapi import pyobject_vectorcall"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def target_args(python, script, stop):
    return [python, "-ex", "set breakpoint pending on", "-ex", "break %s" % stop, "-ex", "run -S %s" % script]


# Cases the extension does not pass yet, and why; each must still fail (when one passes, take
# it out of this list): the run prints them as GAP lines.
KNOWN_GAPS = {}


class Cases(object):
    def __init__(self, what):
        self.what = what
        self.problems = []
        self.passed = []
        self.gaps = []

    def check(self, name, ok, output):
        if name in KNOWN_GAPS:
            if ok:
                self.problems.append("%s: %s passes now: take it out of KNOWN_GAPS" % (self.what, name))
            else:
                self.gaps.append("%s (%s)" % (name, KNOWN_GAPS[name]))
        elif ok:
            self.passed.append(name)
        else:
            self.problems.append("%s: %s: got %r" % (self.what, name, output))


def matches(pattern, text):
    """The originals' assertMultilineMatches: re.match with DOTALL."""
    return re.match(pattern, text, re.DOTALL) is not None


# ---- the sample: test_backtrace.PyBtTests, test_misc.PyListTests/StackNavigationTests/... ------

def sample_commands(symbols):
    reset = "frame 0" if symbols else "pyframes frame 0"
    commands = ["py-bt", "py-bt-full", "py-list", "py-list 9", "py-list 1,3", "py-down",
                "py-up", "py-print __name__", "py-print len", "py-locals",
                reset, "py-up", "py-up", "py-locals",
                reset, "py-up", "py-up", "py-up", "py-up", "py-up"]
    if symbols:
        commands += ["delete", "break wrapper_call", "continue", "py-bt",
                     "delete", "break update_refs", "continue", "py-bt", "py-bt-full"]
    return commands


# The originals' '^.*\n' prefix is gdb's own output before the command's: (?:^|.*\n) here, where
# each command's output is captured alone.
BT = r'''(?:^|.*\n)Traceback \(most recent call first\):
%s  File ".*gdb_sample.py", line 10, in baz
    id\(42\)
  File ".*gdb_sample.py", line 7, in bar
    baz\(a, b, c\)
  File ".*gdb_sample.py", line 4, in foo
    bar\(a=a, b=b, c=c\)
  File ".*gdb_sample.py", line 12, in <module>
    foo\(1, 2, 3\)
'''
BT_C_FRAME = r"  <built-in method id of module object .*>\n"
# With symbols but no debug information (scripts/build-pythons.sh's builds) the C function's
# frame is known by its symbol but its object cannot be read: libpython.py's own words for that.
BT_C_FRAME_NO_TYPES = r"  PyCFunction invocation \(unable to read func: missing debuginfos\?\)\n"
BT_FULL = r'''(?:^|.*\n)#[0-9]+ Frame 0x-?[0-9a-f]+, for file .*gdb_sample.py, line 7, in bar \(a=1, b=2, c=3\)
    baz\(a, b, c\)
#[0-9]+ Frame 0x-?[0-9a-f]+, for file .*gdb_sample.py, line 4, in foo \(a=1, b=2, c=3\)
    bar\(a=a, b=b, c=c\)
#[0-9]+ Frame 0x-?[0-9a-f]+, for file .*gdb_sample.py, line 12, in <module> \(\)
    foo\(1, 2, 3\)
'''
LIST = ('   5    \n'
        '   6    def bar(a, b, c):\n'
        '   7        baz(a, b, c)\n'
        '   8    \n'
        '   9    def baz(*args):\n'
        ' >10        id(42)\n'
        '  11    \n'
        '  12    foo(1, 2, 3)\n')
LIST_9 = ('   9    def baz(*args):\n'
          ' >10        id(42)\n'
          '  11    \n'
          '  12    foo(1, 2, 3)\n')
LIST_1_3 = ('   1    # Sample script for use by test_gdb\n'
            '   2    \n'
            '   3    def foo(a, b, c):\n')


def check_sample(out, cases, version, symbols, elf_symbols):
    """out: {index: output} of sample_commands(). `symbols`: symbols and debug information;
    `elf_symbols`: symbols at least."""
    # PyListTests' listings end at line 12: the sample's own copy continues, so compare up to it.
    def upto_12(text):
        return text[:text.index("  12    foo(1, 2, 3)\n") + len("  12    foo(1, 2, 3)\n")] if "  12    foo" in text else text
    c_frame = BT_C_FRAME if symbols else BT_C_FRAME_NO_TYPES if elf_symbols else ""
    cases.check("test_bt", matches(BT % c_frame, out[0]), out[0])
    cases.check("test_bt_full", matches(BT_FULL, out[1]), out[1])
    cases.check("PyListTests.test_basic_command", upto_12(out[2]).endswith(LIST), out[2])
    cases.check("PyListTests.test_one_abs_arg", upto_12(out[3]).endswith(LIST_9), out[3])
    # The stripped interpreter's copy of the sample has its line 2 (blank in the original).
    list_1_3 = LIST_1_3 if symbols else LIST_1_3.replace("   2    \n", "   2    " + STRIPPED_LINE_2)
    cases.check("PyListTests.test_two_abs_args", out[4].endswith(list_1_3), out[4])
    cases.check("test_down_at_bottom", out[5].endswith("Unable to find a newer python frame\n"), out[5])
    cases.check("test_printing_global", matches(r"(^|.*\n)global '__name__' = '__main__'\n.*", out[7]), out[7])
    cases.check("test_printing_builtin", matches(
        r"(^|.*\n)builtin 'len' = <built-in method len of (module|types\.ModuleType) object at remote 0x-?[0-9a-f]+>\n.*",
        out[8]), out[8])
    cases.check("PyLocalsTests.test_basic_command", matches(r"(^|.*\n)args = \(1, 2, 3\)\n.*", out[9]), out[9])
    # test_locals_after_up: libpython prints 'Locals for NAME' per frame of the evaluation-loop
    # run from 3.11 (the run after two py-up: foo's, where bar(a=a, ...) entered a new one);
    # up to 3.10 one frame per py-up, no header: bar's variables.
    if version >= (3, 11):
        want = r"(^|.*\n)Locals for foo\na = 1\nb = 2\nc = 3\nLocals for <module>\n.*" if symbols else \
            r"(^|.*\n)Locals for \w+\n(.*\n)?a = 1\nb = 2\nc = 3\n.*"
    else:
        want = r"^a = 1\nb = 2\nc = 3\n$"
    cases.check("test_locals_after_up", matches(want, out[13]), out[13])
    cases.check("test_up_at_top", out[19].endswith("Unable to find an older python frame\n"), out[19])
    if symbols:
        cases.check("test_wrapper_call", re.search(r"<method-wrapper u?'__init__' of MyList object at ", out[23]) is not None,
                    out[23])
        cases.check("test_gc (py-bt)", "Garbage-collecting" in out[27], out[27])
        cases.check("test_gc (py-bt-full)", "Garbage-collecting" in out[28], out[28])


# ---- the C-call sample: test_misc.StackNavigationTests / PyPrintTests ----------------------------

C_CALL_COMMANDS = ["py-up", "py-up", "py-down", "frame 0", "py-up", "py-print args",
                   "frame 0", "py-up", "py-up", "py-print c", "py-print b", "py-print a"]
BAZ = r"#[0-9]+ Frame 0x-?[0-9a-f]+, for file <string>, line 12, in baz \(args=\(1, 2, 3\)\)\n"
VECTORCALL = r"#[0-9]+ <built-in method pyobject_vectorcall of (module|types\.ModuleType) object at remote 0x[0-9a-f]+>\n"


def check_c_call(out, cases):
    cases.check("test_pyup_command", matches("^" + BAZ + VECTORCALL + "$", out[0] + out[1]), out[0] + out[1])
    cases.check("test_up_then_down", matches("^" + BAZ + VECTORCALL + BAZ + "$", out[0] + out[1] + out[2]),
                out[0] + out[1] + out[2])
    cases.check("PyPrintTests.test_basic_command", matches(r"(^|.*\n)local 'args' = \(1, 2, 3\)\n.*", out[5]), out[5])
    both = out[9] + out[10] + out[11]
    cases.check("test_print_after_up", matches(r"(^|.*\n)local 'c' = 3\nlocal 'b' = 2\nlocal 'a' = 1\n.*", both), both)


# ---- the same stop under libpython.py itself ------------------------------------------------

# gdb's own commands in the session: not compared.
NOT_COMPARED = ("frame 0", "pyframes frame 0", "delete", "continue")
LIBPYTHON_FAILED = ("Unable to read information on python frame", "unable to read python frame information",
                    "Python Exception", "Error occurred in Python")


def libpython_of(python):
    """The libpython.py a pyenv build installs beside its interpreter (bin/python3.X-gdb.py)."""
    directory = os.path.dirname(os.path.realpath(python))
    found = [n for n in os.listdir(directory) if re.match(r"^python3\.\d+-gdb\.py$", n)]
    return os.path.join(directory, found[0]) if found else None


def same_but_addresses(text):
    """The text with every hex address as 0xADDR: two runs of the same program place objects at
    different addresses (their environments differ: the session's own variables), so only the
    rest is compared; the addresses' form is checked by the originals' expressions above."""
    return re.sub(r"0x[0-9a-f]+", "0xADDR", text)


def compare_with_libpython(args, script, stop, commands, ours, workdir, cases, what):
    """The sample's commands at the same stop with libpython.py loaded instead of the extension:
    each output must be libpython's (addresses aside), except where libpython itself fails to
    read the frame."""
    libpython = libpython_of(args.python)
    if libpython is None:
        return
    results = gs.session(None, ["-iex", "source %s" % libpython] + target_args(args.python, script, stop), commands,
                         workdir)
    differ, compared = [], 0
    for index, command in enumerate(commands):
        if command in NOT_COMPARED or command.startswith("break "):
            continue
        theirs = results[index]["output"] + ("ERROR: %s\n" % results[index]["error"] if results[index]["error"] else "")
        if any(word in theirs for word in LIBPYTHON_FAILED):
            continue
        compared += 1
        if same_but_addresses(theirs) != same_but_addresses(ours[index]):
            differ.append("#%d %s: libpython %r, ours %r" % (index, command, theirs, ours[index]))
    cases.check("%s: same output as %s in %d commands" % (what, os.path.basename(libpython), compared), not differ,
                "\n".join(differ))


def run_session(args, script, stop, commands, workdir):
    results = gs.session(args.loader, target_args(args.python, script, stop), commands, workdir)
    out = {}
    for index, result in enumerate(results):
        out[index] = result["output"] + ("ERROR: %s\n" % result["error"] if result["error"] else "")
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", required=True)
    parser.add_argument("--loader", required=True)
    parser.add_argument("--cases", choices=("all", "basic"), default="all")
    args = parser.parse_args()
    version = version_of(args.python)
    # Without debug information gdb can stop at builtin_id but describe no C frame: the sample
    # then runs as on a stripped interpreter.
    elf_symbols = has_symbols(args.python)
    symbols = elf_symbols and has_debug_info(args.python)
    label = "%s (%d.%d, %s)" % (args.python, version[0], version[1],
                                "symbols and debug info" if symbols else "no debug info")
    workdir = tempfile.mkdtemp(prefix="gdb-libpython-")
    cases = Cases(label)
    try:
        script = SAMPLE
        if not symbols:
            with open(SAMPLE) as f:
                lines = f.readlines()
            lines[1] = STRIPPED_LINE_2
            script = os.path.join(workdir, "gdb_sample.py")
            with open(script, "w") as f:
                f.writelines(lines)
        stop = "builtin_id" if symbols else "clock_nanosleep"
        ours = run_session(args, script, stop, sample_commands(symbols), workdir)
        check_sample(ours, cases, version, symbols, elf_symbols)
        if symbols:
            compare_with_libpython(args, script, stop, sample_commands(symbols), ours, workdir, cases, "sample")
        if args.cases == "all" and symbols and has_pyobject_vectorcall(args.python):
            ours = run_session(args, C_CALL, "builtin_id", C_CALL_COMMANDS, workdir)
            check_c_call(ours, cases)
            compare_with_libpython(args, C_CALL, "builtin_id", C_CALL_COMMANDS, ours, workdir, cases, "C-call sample")
        if args.cases == "all" and symbols:
            out = run_session(args, THREADS, "builtin_id", ["thread apply all py-bt", "thread apply all py-bt-full"],
                              workdir)
            cases.check("test_threads (py-bt)", "Waiting for the GIL" in out[0], out[0])
            cases.check("test_threads (py-bt-full)", "Waiting for the GIL" in out[1], out[1])
    except gs.GdbFailure as error:
        cases.problems.append("%s: %s" % (label, error))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    for gap in cases.gaps:
        print("GAP %s" % gap)
    for problem in cases.problems:
        print("FAIL " + problem)
    if cases.problems:
        return 1
    print("ok: %d cases on %s: %s" % (len(cases.passed), label, ", ".join(cases.passed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
