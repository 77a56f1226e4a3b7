"""`pyframes ledger`: the hangshim ledger held in the target's memory, printed by
`hangshim ledger`.

libhangshim.so keeps each process's ledger as a MAP_SHARED mapping of a file in $HANGSHIM_DIR
named like preload/ledger/names.h says. The mapping is found in the target's address space
(/proc/PID/maps of a live process; `info proc mappings`, i.e. the NT_FILE note, of a core), its
bytes are read through gdb (gdb.Inferior.read_memory: live, core or remote alike), written to a
private file (0600 in a 0700 directory) and given to `hangshim ledger --image` (a memory image of
the mapping: hangshim knows the format, this module reads none of it).

Cores leave shared file mappings out unless bit 3 of /proc/PID/coredump_filter was set (gdb's
gcore honours that filter too), so a core usually lacks the ledger's pages: then the file the
mapping names is read instead when it still exists, and the output says so."""
import collections
import json
import os
import shutil
import tempfile

import gdb

from . import target as targets
from .frames_text import printable
from .parsing import core_holds, core_sections_with_contents, ledger_name_pid, ledger_regions
from .tools import HANGSHIM, ToolError, run

LEDGER_TIMEOUT = 60
_DELETED = " (deleted)"



def _choose(target, regions):
    """The process's own ledger: the one named for its pid; a single ledger named for another pid
    (inherited across fork) is taken with a note."""
    own = [r for r in regions if ledger_name_pid(r[0]) == target.pid]
    if own:
        return own[0], None
    if len(regions) == 1:
        path = regions[0][0]
        return regions[0], "the mapped ledger is named for pid %d, not %d (inherited across fork?)" % (
            ledger_name_pid(path), target.pid)
    if regions:
        raise ToolError("pyframes ledger: %s maps %d ledgers, none named for its pid: %s"
                        % (target.describe(), len(regions), ", ".join(r[0] for r in regions)))
    raise ToolError("pyframes ledger: %s has no hangshim ledger mapped (it did not run with "
                    "LD_PRELOAD=libhangshim.so, or has not called NCCL yet)" % target.describe())


def _read_from_memory(region):
    """The whole mapping: `hangshim ledger --image` reads the ledger's own size from it."""
    path, start, end = region
    return bytes(gdb.selected_inferior().read_memory(start, end - start))


def _file_on_disk(target, path):
    if path.endswith(_DELETED):
        return None
    candidates = ([target.root.rstrip("/") + path] if target.root else []) + [path]
    for candidate in candidates:
        if os.path.isfile(candidate):
            return candidate
    return None


def _core_holds(target, region):
    """Whether the core's own segments hold the region, as gdb lists them (a segment the core
    left out has no contents)."""
    try:
        text = gdb.execute("maintenance info sections", to_string=True)
    except gdb.error as error:
        raise ToolError("pyframes ledger: gdb cannot list the sections of the core %s: %s" % (target.core_path, error))
    return core_holds(core_sections_with_contents(text), region[1], region[2])


def ledger_bytes(target):
    """(name, bytes, source description, notes) of the target's ledger."""
    region, note = _choose(target, ledger_regions(targets.mappings(target, "pyframes ledger")))
    notes = [note] if note else []
    path = region[0]
    # gdb reads pages a core left out from the mapped file as it is now, without saying so: only
    # the core's own segments count as the target's memory.
    if target.kind != "core" or _core_holds(target, region):
        try:
            return path, _read_from_memory(region), "the memory of %s" % target.describe(), notes
        except gdb.MemoryError:
            raise ToolError("pyframes ledger: the ledger mapping %s of %s cannot be read (%#x-%#x)"
                            % (path, target.describe(), region[1], region[2]))
    on_disk = _file_on_disk(target, path)
    if on_disk is None:
        raise ToolError("pyframes ledger: the core does not hold the pages of the ledger %s (cores leave shared "
                        "file mappings out: set bit 3 of /proc/PID/coredump_filter before the dump) and the file "
                        "no longer exists" % path)
    with open(on_disk, "rb") as f:
        data = f.read()
    notes.append("the core does not hold the ledger's pages (cores leave shared file mappings out unless bit 3 of "
                 "/proc/PID/coredump_filter is set); this is the file %s as it is now, which may be newer than "
                 "the core" % on_disk)
    return path, data, "the file %s" % on_disk, notes


def _write_private(directory, name, data):
    path = os.path.join(directory, name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    return path


def show(hangshim_args, save_path=None):
    """Prints the target's ledger with `hangshim ledger FILE hangshim_args...`."""
    target = targets.current()
    name, data, source, notes = ledger_bytes(target)
    base = os.path.basename(name[:-len(_DELETED)] if name.endswith(_DELETED) else name)
    if save_path is not None:
        try:
            _write_private(os.path.dirname(os.path.abspath(save_path)), os.path.basename(save_path), data)
        except OSError as error:
            raise ToolError("pyframes ledger: cannot save to %s: %s (name a new file in a writable directory)"
                            % (save_path, error.strerror))
    directory = tempfile.mkdtemp(prefix="pyframes-ledger-")  # 0700
    try:
        copy = _write_private(directory, base, data)
        completed = run(HANGSHIM, ["ledger", "--image", copy] + list(hangshim_args), LEDGER_TIMEOUT)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    if completed.returncode != 0:
        line = completed.first_error_line() or "hangshim ledger exited with status %d" % completed.returncode
        raise ToolError("pyframes ledger: %s (ledger %s, read from %s)" % (line.replace(copy, name), name, source))
    if "--json" in hangshim_args:
        gdb.write(_json_with_origin(completed.stdout, name, source, notes, save_path))
        return
    gdb.write("Ledger %s (read from %s)\n" % (printable(name), printable(source)))
    for note in notes:
        gdb.write("note: %s\n" % printable(note))
    if save_path is not None:
        gdb.write("saved to %s\n" % printable(save_path))
    # hangshim names the file it read: the private copy, which is gone; the ledger is `name`.
    gdb.write(completed.stdout.replace(copy, printable(name)))


def _json_with_origin(text, name, source, notes, save_path):
    """hangshim's document with "ledger" naming the target's ledger instead of the private copy,
    plus where it was read from ("read_from", "notes", "saved_to")."""
    try:
        document = json.loads(text, object_pairs_hook=collections.OrderedDict)
    except ValueError:
        raise ToolError("pyframes ledger: hangshim ledger --json printed no JSON (is HANGSHIM_CLI a hangshim "
                        "executable?)")
    document["ledger"] = name
    document["read_from"] = source
    document["notes"] = notes
    if save_path is not None:
        document["saved_to"] = save_path
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
