"""hangshim installed with pip: the pyframes and hangshim commands, libhangshim.so, the
collector scripts and the gdb extension, as `cmake --install` lays them out, under _bundle/
(bin/, lib/, share/hangshim/). The console scripts pip puts on PATH run the programs in
_bundle/bin, so `hangshim run` finds _bundle/lib/libhangshim.so next to itself, as it does in
any installed prefix."""

import os

__all__ = ["bundle_dir", "tool", "shim_library", "gdb_extension"]


def bundle_dir():
    """The installed prefix inside the package (bin/, lib/, share/hangshim/)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bundle")


def tool(name):
    """The path of an installed command: pyframes, hangshim, hang-dump, hang-dump-slurm, ..."""
    return os.path.join(bundle_dir(), "bin", name)


def shim_library():
    """libhangshim.so, for LD_PRELOAD without `hangshim run`."""
    return os.path.join(bundle_dir(), "lib", "libhangshim.so")


def gdb_extension():
    """The gdb extension to `source` (py-bt, py-list, ... without libpython's debug info)."""
    return os.path.join(bundle_dir(), "share", "hangshim", "gdb", "pyframes-gdb.py")
