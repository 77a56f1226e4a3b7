"""The executables the extension runs (pyframes, hangshim) and how it runs them.

The extension never reimplements the engine: it runs the `pyframes` and `hangshim` executables
as subprocesses, with an argument list (never a shell), so no path or name from the target can
be taken for shell syntax. This module finds them and turns their failures into one-line
errors that say what to set.

Where an executable is looked for, in order:
  1. the environment variable (PYFRAMES, HANGSHIM_CLI), when set;
  2. the path the loader script was configured with (register(): the build tree's copy of the
     loader names the build's executables, the installed copy names ../../../bin relative to
     itself);
  3. PATH.
"""
import collections
import os
import re
import shutil
import subprocess


class ToolError(Exception):
    """A failure to report as one line (the commands turn it into gdb.GdbError)."""


class Tool(object):
    def __init__(self, name, env_var):
        self.name = name            # "pyframes"
        self.env_var = env_var      # "PYFRAMES"
        self.configured = None      # set by register()

    def candidates(self):
        """(where, path) pairs in the order they are tried."""
        found = []
        from_env = os.environ.get(self.env_var)
        if from_env:
            found.append(("$%s" % self.env_var, from_env))
        if self.configured:
            found.append(("the path the extension was installed with", self.configured))
        on_path = shutil.which(self.name)
        if on_path:
            found.append(("PATH", on_path))
        return found

    def path(self):
        """The executable to run, or ToolError naming what was tried and what to set."""
        tried = []
        for where, path in self.candidates():
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
            tried.append("%s (%s)" % (path, where))
            if where.startswith("$"):
                # An explicit choice that does not work must not silently fall back to another.
                break
        looked = "; ".join(tried) if tried else "not on PATH"
        raise ToolError("%s: the %s executable was not found (%s): set %s=/path/to/%s or put it on PATH"
                        % (self.name, self.name, looked, self.env_var, self.name))


PYFRAMES = Tool("pyframes", "PYFRAMES")
HANGSHIM = Tool("hangshim", "HANGSHIM_CLI")


class Completed(collections.namedtuple("Completed", "argv returncode stdout stderr")):
    """A finished run of one of the tools: its arguments, exit status and decoded output."""
    __slots__ = ()

    def first_error_line(self):
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        return lines[0] if lines else ""


def run(tool, args, timeout):
    """Runs `tool args...` (a list of strings, never through a shell) and returns Completed.
    Output is decoded leniently: a hostile file name in the target cannot make this raise."""
    argv = [tool.path()] + [str(a) for a in args]
    env = dict(os.environ)
    env["NO_COLOR"] = "1"
    try:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ToolError("%s: %s did not finish within %d s (the target may be too large; try again)"
                        % (tool.name, argv[0], timeout))
    except OSError as error:
        raise ToolError("%s: cannot run %s: %s (set %s to a working %s executable)"
                        % (tool.name, argv[0], error.strerror or error, tool.env_var, tool.name))
    return Completed(argv, done.returncode, done.stdout.decode("utf-8", "replace"),
                     done.stderr.decode("utf-8", "replace"))


def supported_versions(timeout=5):
    """The CPython range the pyframes executable says it reads ("3.6-3.15", from `pyframes
    --version`: the one place the range is written is pyframes' versions.h), or None when
    pyframes cannot be run or says no range. Never raises: the extension loads without it."""
    try:
        done = run(PYFRAMES, ["--version"], timeout)
    except ToolError:
        return None
    match = re.search(r"reads CPython (\d+\.\d+-\d+\.\d+)", done.stdout)
    return match.group(1) if done.returncode == 0 and match else None
