"""Text the extension reads from gdb and from /proc, and the arguments of its commands, parsed
without gdb (so these are unit-tested with a plain interpreter: tests/gdb/test_parsing.py)."""
import collections
import os
import re

_CORE_LINE = re.compile(r"^Local core dump file:\s*\n\s*`(.*)', file type ", re.MULTILINE)


def core_path_from_info_target(text):
    """The core file named in `info target` output ("Local core dump file:\\n\\t`PATH', file
    type elf64-x86-64."), or None. gdb 13 has no Python API for it."""
    match = _CORE_LINE.search(text)
    return match.group(1) if match else None


# The process layer of gdb's target stack as `info target` names it (each layer's long name and
# a colon): core file, live process, gdbserver (gdb 9's and 13's wordings of the latter).
_TARGET_LAYERS = (
    ("core", re.compile(r"^Local core dump file:", re.MULTILINE)),
    ("native", re.compile(r"^Native process:", re.MULTILINE)),
    ("remote", re.compile(r"^(Extended r|R)emote (serial )?target (in|using) gdb-specific protocol:", re.MULTILINE)),
)


def target_kind_from_info_target(text):
    """"core", "native" or "remote" (as Inferior.connection.type says from gdb 11 on, remote and
    extended-remote as one), from `info target` output; None when it names none of them. For gdb
    9 and 10 (Ubuntu 20.04's, Debian 11's), whose Inferior has no connection."""
    for kind, layer in _TARGET_LAYERS:
        if layer.search(text):
            return kind
    return None


def root_from_sysroot(sysroot):
    """gdb's sysroot as a pyframes --root: empty (or "target:", the default) means files are
    where the core says; "target:/x" on a local target is "/x"."""
    if not sysroot:
        return None
    if sysroot.startswith("target:"):
        sysroot = sysroot[len("target:"):]
    if not sysroot or sysroot == "/":
        return None
    return sysroot


def lib_search_from_solib_path(value):
    """gdb's solib-search-path (directories separated like PATH) as pyframes --lib-search DIRs."""
    return [d for d in (value or "").split(os.pathsep) if d]


class Mapping(collections.namedtuple("Mapping", "start end offset path")):
    """One mapping of the target: [start, end) from `offset` in the file `path`."""
    __slots__ = ()

    def __repr__(self):
        return "Mapping(%#x-%#x +%#x %s)" % (self.start, self.end, self.offset, self.path)


_PROC_MAPS = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) \S{4} ([0-9a-f]+) \S+ \d+ *(.*)$")
_GDB_MAPPINGS = re.compile(r"^\s*0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(?:[r-][w-][x-][ps-]\s+)?(.*?)\s*$")


def _parse_mappings(text, pattern):
    """The lines of `text` that `pattern` matches, as Mappings: its groups are start, end, offset
    (hexadecimal) and path."""
    matches = (pattern.match(line) for line in text.splitlines())
    return [Mapping(int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16), m.group(4)) for m in matches if m]


def parse_proc_maps(text):
    """/proc/PID/maps lines as Mappings (anonymous ones have an empty path)."""
    return _parse_mappings(text, _PROC_MAPS)


def parse_gdb_mappings(text):
    """`info proc mappings` output, live (with a Perms column) or from a core's NT_FILE note."""
    return _parse_mappings(text, _GDB_MAPPINGS)


# preload/ledger/names.h: "hangshim-r00003-node7-12345.ledger", "hangshim-norank-node7-12345.ledger".
_LEDGER_NAME = re.compile(r"^hangshim-(?:r\d+|norank)-[A-Za-z0-9._]+-(\d+)\.ledger$")
_DELETED = " (deleted)"


def ledger_name_pid(path):
    """The pid in a ledger file's name, or None when `path` is not a ledger. A mapping of an
    unlinked file reads "PATH (deleted)"; that suffix is ignored here."""
    if path.endswith(_DELETED):
        path = path[:-len(_DELETED)]
    match = _LEDGER_NAME.match(os.path.basename(path))
    return int(match.group(1)) if match else None


def ledger_regions(mappings):
    """The ledger files among the mappings, each as (path, start, end): consecutive mappings of
    one file at consecutive offsets are joined (a mapping can be split by mprotect)."""
    regions = []
    for m in mappings:
        if ledger_name_pid(m.path) is None:
            continue
        if regions:
            path, start, end, next_offset = regions[-1]
            if path == m.path and end == m.start and next_offset == m.offset:
                regions[-1] = (path, start, m.end, m.offset + (m.end - m.start))
                continue
        if m.offset != 0:
            continue  # a piece of a ledger mapped without its header: not the process's own ledger
        regions.append((m.path, m.start, m.end, m.end - m.start))
    return [(path, start, end) for path, start, end, _ in regions]


class UsageError(Exception):
    pass


def parse_count(argument, what):
    """An optional positive count (`pyframes up 2`); 1 when absent."""
    argument = argument.strip()
    if not argument:
        return 1
    if not argument.isdigit() or int(argument) < 1:
        raise UsageError("%s: %r is not a positive number of frames" % (what, argument))
    return int(argument)


def parse_frame_number(argument):
    argument = argument.strip()
    if not argument.isdigit():
        raise UsageError("pyframes frame: %r is not a frame number (see pyframes bt)" % argument if argument
                         else "pyframes frame: which frame? (usage: pyframes frame N; the numbers are pyframes bt's)")
    return int(argument)


LIST_CONTEXT = 5  # lines before and after, like py-list


def parse_list_range(argument, current_line):
    """The lines `pyframes list ARG` shows: no argument, around the current line; N, around
    line N; START,END, those lines (as py-list does). Returns (first, last), 1-based inclusive."""
    argument = argument.strip()
    if not argument:
        if current_line <= 0:
            raise UsageError("pyframes list: the selected Python frame has no line number")
        return max(1, current_line - LIST_CONTEXT), current_line + LIST_CONTEXT
    if "," in argument:
        first, _, last = argument.partition(",")
        first, last = first.strip(), last.strip()
        if not (first.isdigit() and last.isdigit()) or int(first) < 1 or int(last) < int(first):
            raise UsageError("pyframes list: %r is not a range START,END of line numbers" % argument)
        return int(first), int(last)
    if not argument.isdigit() or int(argument) < 1:
        raise UsageError("pyframes list: %r is not a line number (usage: pyframes list [LINE | START,END])"
                         % argument)
    line = int(argument)
    return max(1, line - LIST_CONTEXT), line + LIST_CONTEXT


_SECTION = re.compile(r"^\s*\[\d+\]\s+0x([0-9a-f]+)->0x([0-9a-f]+) at 0x[0-9a-f]+: (\S+)(.*)$")


def core_sections_with_contents(text):
    """The core's memory segments that hold bytes, as (start, end), from gdb's `maintenance info
    sections`: the lines after "Core file:" named loadN (loadNa/loadNb where a segment holds
    fewer bytes than it maps) with HAS_CONTENTS. The pages a core left out have no section with
    contents (gdb would read them from the mapped file as it is now, without saying so)."""
    out = []
    in_core = False
    for line in text.splitlines():
        if line.startswith("Core file:"):
            in_core = True
            continue
        if not in_core:
            continue
        if line and not line[0].isspace():
            in_core = False  # the next object's listing
            continue
        match = _SECTION.match(line)
        if match and match.group(3).startswith("load") and "HAS_CONTENTS" in match.group(4).split():
            out.append((int(match.group(1), 16), int(match.group(2), 16)))
    return out


def core_holds(sections, start, end):
    """True when the core's sections with contents (start, end) hold every byte of [start, end)."""
    position = start
    for first, last in sorted(sections):
        if first <= position < last:
            position = last
            if position >= end:
                return True
    return position >= end
