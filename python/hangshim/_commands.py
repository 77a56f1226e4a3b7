"""The console scripts pip installs: each replaces itself (exec) with the bundled program of the
same name, so signals, exit status and /proc/PID/exe are the program's own."""

import os
import sys

from . import tool


def _run(name):
    path = tool(name)
    if not os.access(path, os.X_OK):
        sys.stderr.write("%s: the bundled program %s is missing or not executable (reinstall hangshim: "
                         "pip install --force-reinstall hangshim)\n" % (name, path))
        sys.exit(127)
    os.execv(path, [name] + sys.argv[1:])


def pyframes():
    _run("pyframes")


def hangshim():
    _run("hangshim")


def hang_dump():
    _run("hang-dump")


def hang_dump_slurm():
    _run("hang-dump-slurm")


def hang_dump_pdsh():
    _run("hang-dump-pdsh")


def core_setup():
    _run("core-setup")
