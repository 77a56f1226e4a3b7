"""How the commands print Python frames, in gdb's idiom: "#N  function (file:line)" with the
source line under it, like gdb's `bt` and `frame`; `pyframes list` like py-list (the current
line marked with '>'). Everything that came from the target is made printable first: a hostile
name or file cannot move the cursor or hide text."""
import os
import re

_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f]")
MAX_SOURCE_BYTES = 8 << 20  # like pyframes' SourceCache


def printable(text):
    if text is None:
        return ""
    return _UNPRINTABLE.sub(lambda m: "\\x%02x" % ord(m.group(0)), str(text))


def function_name(frame):
    """The qualified name where the interpreter has one (3.11+), else the function's name."""
    return frame.get("qualname") or frame.get("function") or "???"


def location(frame):
    file = printable(frame.get("file"))
    line = frame.get("line") or 0
    return "%s:%d" % (file, line) if line > 0 else file


def frame_line(label, frame):
    """'#3  Foo.method (/srv/train.py:88)'."""
    return "%-3s %s (%s)" % (label, printable(function_name(frame)), location(frame))


class Sources(object):
    """Source files of the target's frames, read from this machine. A live process's relative
    paths are resolved in its working directory (/proc/PID/cwd) and absolute ones also under
    /proc/PID/root (another mount namespace); a core's under gdb's sysroot (--root) first."""

    def __init__(self, target):
        self.target = target
        self.cache = {}

    def candidates(self, file):
        if not file or file.startswith("<"):  # <string>, <frozen importlib._bootstrap>, <stdin>
            return []
        paths = []
        if self.target.kind == "live":
            if os.path.isabs(file):
                paths += [file, "/proc/%d/root%s" % (self.target.pid, file)]
            else:
                paths.append("/proc/%d/cwd/%s" % (self.target.pid, file))
        elif os.path.isabs(file):
            if self.target.root:
                paths.append(self.target.root.rstrip("/") + file)
            paths.append(file)
        return paths

    def lines(self, file):
        """The file's lines (decoded leniently), or None when it cannot be read here."""
        if file in self.cache:
            return self.cache[file]
        found = None
        for path in self.candidates(file):
            try:
                if not os.path.isfile(path):  # never a FIFO or a device that could block
                    continue
                with open(path, "rb") as f:
                    data = f.read(MAX_SOURCE_BYTES)
            except OSError:
                continue
            found = data.decode("utf-8", "replace").split("\n")
            if found and found[-1] == "":
                found.pop()  # the newline that ends the last line starts no line of its own
            break
        self.cache[file] = found
        return found

    def line(self, file, number):
        lines = self.lines(file)
        if lines is None or number < 1 or number > len(lines):
            return None
        return lines[number - 1]


_SPACE = " \t\r\f\v"


def carets(source, frame):
    """Python 3.11+: carets under the stripped source line marking the frame's instruction, from
    the UTF-8 byte columns pyframes read (`column`, `end_column`), as pyframes' own text prints
    them; None when there are none, they span lines, or they would cover the whole line."""
    column, end_column = frame.get("column"), frame.get("end_column")
    if not isinstance(column, int) or not isinstance(end_column, int) or frame.get("end_line") != frame.get("line"):
        return None
    raw = source.encode("utf-8", "surrogateescape")
    stripped = raw.strip(_SPACE.encode())
    lead = len(raw) - len(raw.lstrip(_SPACE.encode()))
    if not stripped or column < lead or end_column <= column or end_column > lead + len(stripped):
        return None
    if column == lead and end_column == lead + len(stripped):
        return None
    width = lambda data: sum(1 for byte in bytearray(data) if byte & 0xC0 != 0x80)  # noqa: E731
    return " " * width(raw[lead:column]) + "^" * width(raw[column:end_column])


def frame_block(label, frame, sources):
    """The frame's line and, when the source is readable, its source line indented under it, with
    carets under the part that runs (3.11+, when they say something)."""
    out = [frame_line(label, frame)]
    source = sources.line(frame.get("file"), frame.get("line") or 0) if sources else None
    if source is not None and source.strip():
        out.append("        " + printable(source.strip().replace("\t", " ")))
        marks = carets(source, frame)
        if marks:
            out.append("        " + marks)
    return out


def listing(frame, first, last, sources):
    """Lines first..last of the frame's file, py-list style: ' 123    text', '>124    text'."""
    lines = sources.lines(frame.get("file"))
    if lines is None:
        return None
    current = frame.get("line") or 0
    out = []
    for number in range(first, min(last, len(lines)) + 1):
        marker = ">" if number == current else " "
        out.append("%s%4d    %s" % (marker, number, printable(lines[number - 1].rstrip().expandtabs(8))))
    return out
