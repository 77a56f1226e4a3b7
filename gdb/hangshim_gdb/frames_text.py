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


def frame_block(label, frame, sources):
    """The frame's line and, when the source is readable, its source line indented under it."""
    out = [frame_line(label, frame)]
    source = sources.line(frame.get("file"), frame.get("line") or 0) if sources else None
    if source is not None and source.strip():
        out.append("        " + printable(source.strip().replace("\t", " ")))
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
