"""What gdb is looking at, as pyframes arguments: a live process (its pid), a core file (its
path, plus the executable gdb loaded and gdb's sysroot / solib-search-path), or a remote
target (gdbserver), which pyframes reads through a core gdb writes of it."""
import os

import gdb

from .parsing import (core_path_from_info_target, lib_search_from_solib_path, parse_gdb_mappings, parse_proc_maps,
                      root_from_sysroot, target_kind_from_info_target)
from .tools import ToolError


class Target(object):
    """One gdb inferior as a pyframes target."""

    def __init__(self, kind, pid, inferior_num, core_path=None, executable=None, root=None, lib_search=()):
        self.kind = kind                # "live", "core" or "remote"
        self.pid = pid
        self.inferior_num = inferior_num
        self.core_path = core_path
        self.executable = executable
        self.root = root
        self.lib_search = list(lib_search)

    def key(self):
        """Identifies the target for the snapshot cache (a new core or process is a new key)."""
        return (self.inferior_num, self.kind, self.pid, self.core_path, self.executable, self.root,
                tuple(self.lib_search))

    def describe(self):
        if self.kind == "core":
            return "core %s" % self.core_path
        if self.kind == "remote":
            return "remote process %d" % self.pid
        return "process %d" % self.pid

    def core_args(self, core_path):
        """pyframes arguments for reading `core_path` as this target's memory."""
        args = []
        if self.executable:
            args += ["--exe", self.executable]
        if self.root:
            args += ["--root", self.root]
        for directory in self.lib_search:
            args += ["--lib-search", directory]
        return args + ["--", core_path]


def mappings(target, command):
    """The target's mappings (parsing.Mapping): /proc/PID/maps of a live process, gdb's `info proc
    mappings` (a core's NT_FILE note, gdbserver's /proc) otherwise; ToolError naming `command`."""
    if target.kind == "live":
        try:
            with open("/proc/%d/maps" % target.pid) as f:
                return parse_proc_maps(f.read())
        except OSError as error:
            raise ToolError("%s: cannot read /proc/%d/maps: %s (run gdb as the process's user or root)"
                            % (command, target.pid, error.strerror))
    try:
        text = gdb.execute("info proc mappings", to_string=True)
    except gdb.error as error:
        raise ToolError("%s: gdb cannot list the mappings of %s: %s" % (command, target.describe(), error))
    return parse_gdb_mappings(text)


def _parameter(name):
    try:
        return gdb.parameter(name)
    except (gdb.error, RuntimeError):
        return None


def current():
    """The selected inferior as a Target, or ToolError when gdb has no process or core."""
    inferior = gdb.selected_inferior()
    if hasattr(inferior, "connection"):
        connection = inferior.connection
        kind = getattr(connection, "type", None) if connection is not None else None
    elif inferior.pid != 0:  # gdb before 11: no Inferior.connection
        kind = target_kind_from_info_target(gdb.execute("info target", to_string=True))
    else:
        kind = None
    if inferior.pid == 0 or kind is None:
        raise ToolError("pyframes: gdb has no process or core file (attach to a process with `attach PID`, "
                        "start one with `run`, or load a core with `core-file FILE`)")
    executable = inferior.progspace.filename if inferior.progspace is not None else None
    if executable and not os.path.isfile(executable):
        executable = None  # "target:..." names or a file gdb found elsewhere: let pyframes use the core's
    root = root_from_sysroot(_parameter("sysroot"))
    lib_search = lib_search_from_solib_path(_parameter("solib-search-path"))
    if kind == "core":
        core_path = core_path_from_info_target(gdb.execute("info target", to_string=True))
        if core_path is None:
            raise ToolError("pyframes: gdb reads a core file but `info target` does not name it "
                            "(load it with `core-file FILE`)")
        return Target("core", inferior.pid, inferior.num, os.path.abspath(core_path), executable, root, lib_search)
    if kind == "native":
        return Target("live", inferior.pid, inferior.num, executable=executable)
    if kind in ("remote", "extended-remote"):
        return Target("remote", inferior.pid, inferior.num, executable=executable, root=root, lib_search=lib_search)
    raise ToolError("pyframes: gdb's target is of a kind pyframes cannot read (%s); use a live process, a core "
                    "file or gdbserver" % kind)
