"""Running gdb -batch sessions with the extension loaded, and reading what they print.

Every session hides debug information (no /usr/lib/debug, no debuginfod) and does not auto-load
libpython.py (Debian's python3.11-dbg installs one for /usr/bin/python3.11): gdb sees what it
would see on a machine without the -dbg packages. The extension is loaded with -iex, before the
target, as ~/.gdbinit would."""
import json
import os
import re
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CAPTURE = os.path.join(HERE, "capture.py")
HIDE_DEBUG_INFO = ["-iex", "set debug-file-directory /nonexistent", "-iex", "set auto-load python-scripts off",
                   "-iex", "set debuginfod enabled off", "-iex", "set pagination off", "-iex", "set width 0"]


class GdbFailure(Exception):
    pass


def clean_env(extra=None, drop=("PYFRAMES", "HANGSHIM_CLI")):
    env = dict(os.environ)
    for name in drop:
        env.pop(name, None)
    env["LC_ALL"] = "C.UTF-8"
    env.update(extra or {})
    return env


def gdb_argv(loader, target_args, tail):
    argv = ["gdb", "-nx", "-batch"] + HIDE_DEBUG_INFO
    if loader:
        argv += ["-iex", "source %s" % loader]
    return argv + list(target_args) + list(tail)


def run_batch(loader, target_args, ex_commands, env=None, timeout=120):
    """gdb -batch with -ex commands: (returncode, stdout, stderr), for checking what gdb itself
    prints (one-line errors on stderr)."""
    tail = []
    for command in ex_commands:
        tail += ["-ex", command]
    done = subprocess.run(gdb_argv(loader, target_args, tail), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=env or clean_env(), timeout=timeout)
    return done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")


def session(loader, target_args, commands, workdir, env=None, timeout=180):
    """Runs `commands` in one gdb session (capture.py) and returns one result per command:
    {"command", "output", "error"} (error: the message gdb would print, or None)."""
    fd, session_path = tempfile.mkstemp(prefix="session-", suffix=".json", dir=workdir)
    out_path = session_path + ".out"
    with os.fdopen(fd, "w") as f:
        json.dump({"commands": commands, "out": out_path}, f)
    env = dict(env or clean_env())
    env["GDB_CAPTURE_SESSION"] = session_path
    argv = gdb_argv(loader, target_args, ["-x", CAPTURE])
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise GdbFailure("gdb did not finish within %ss: %s" % (timeout, " ".join(argv)))
    if not os.path.exists(out_path):
        raise GdbFailure("the gdb session wrote no results (status %d): %s" % (
            done.returncode, done.stdout.decode("utf-8", "replace")[-3000:]))
    with open(out_path) as f:
        return json.load(f)


# "#3  Foo.method (/srv/train.py:88)"; "py#3 ..." in --native output.
_FRAME = re.compile(r"^(py)?#(\d+)\s+(.+?) \((.*):(\d+)\)$")
_NATIVE = re.compile(r"^#(\d+)\s+\[native\] (.*)$")


def parse_frames(lines):
    """[(kind, number, function, file, line, source_line or None)] of frame lines, in order."""
    frames = []
    for i, line in enumerate(lines):
        native = _NATIVE.match(line)
        if native:
            frames.append(("native", int(native.group(1)), native.group(2), None, None, None))
            continue
        match = _FRAME.match(line)
        if match:
            source = lines[i + 1][8:] if i + 1 < len(lines) and lines[i + 1].startswith("        ") else None
            frames.append(("python", int(match.group(2)), match.group(3), match.group(4), int(match.group(5)),
                           source))
    return frames


# gdb's own header in `thread apply all`: 'Thread 2 (Thread 0x7f... (LWP 123) "name"):', or
# through gdbserver 'Thread 2 (Thread 120.123 "name"):'; without libthread_db (a C library gdb
# has none for) 'Thread 2 (LWP 123 "name"):', and for a process of one thread
# 'Thread 1 (process 123 "name"):'.
_APPLY_HEADER = re.compile(r"^Thread (\d+) \((?:.*?LWP |Thread \d+\.|process )(\d+)[) ]")
# The extension's header in `pyframes bt --all`: 'Thread 2 (LWP 123) "name" (holds the GIL):'.
_ALL_HEADER = re.compile(r'^Thread (\d+) \(LWP (\d+)\)(?: "(.*?)")?(?: \(([^()]*)\))?:$')


def split_blocks(text, header):
    """{lwp: (header match, [lines])} for the blocks that start with `header`."""
    blocks = {}
    current = None
    for line in text.split("\n"):
        match = header.match(line)
        if match:
            current = int(match.group(2))
            blocks[current] = (match, [])
        elif current is not None:
            blocks[current][1].append(line[4:] if header is _ALL_HEADER and line.startswith("    ") else line)
    return blocks


def apply_all_blocks(text):
    return split_blocks(text, _APPLY_HEADER)


def all_blocks(text):
    return split_blocks(text, _ALL_HEADER)


_LOCAL = re.compile(r"^(\(arg\) )?(\S+) = (.*)$")


def parse_locals(text):
    """{name: (repr, is_argument)} from `pyframes locals` output."""
    out = {}
    for line in text.split("\n"):
        match = _LOCAL.match(line)
        if match:
            out[match.group(2)] = (match.group(3), bool(match.group(1)))
    return out


_LISTING = re.compile(r"^([> ])\s*(\d+)    (.*)$")


def parse_listing(text):
    """[(marked, number, text)] from `pyframes list` output."""
    out = []
    for line in text.split("\n"):
        match = _LISTING.match(line)
        if match:
            out.append((match.group(1) == ">", int(match.group(2)), match.group(3)))
    return out
