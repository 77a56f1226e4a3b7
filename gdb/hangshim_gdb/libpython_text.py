"""What the py-* commands print, in libpython.py's formats (CPython's Tools/gdb/libpython.py,
whose output people and scripts know):

  py-bt        Traceback (most recent call first):
                 File "/srv/x.py", line 10, in baz
                   id(42)
                 <built-in method id of module object at remote 0x7f...>
  py-bt-full   #5 Frame 0x7f..., for file /srv/x.py, line 7, in bar (a=1, b=2, c=3)
                   baz(a, b, c)
  py-list      '%4s    %s' per line, the current one as ' >10'
  py-locals    NAME = REPR (from 3.11 under 'Locals for FUNCTION', one block per frame of the run)
  py-print     local 'c' = 3

Everything from the target is made printable first (frames_text.printable)."""
from .frames_text import printable

MAX_OUTPUT_LEN = 1024  # libpython's bound on one repr


def truncated(text):
    text = printable(text)
    return text if len(text) <= MAX_OUTPUT_LEN else text[:MAX_OUTPUT_LEN] + "...(truncated)"


def version_at_least(snapshot, major, minor):
    try:
        parts = [int(p) for p in str(snapshot.process.get("python", "")).split(".")[:2]]
    except ValueError:
        return True
    return len(parts) == 2 and tuple(parts) >= (major, minor)


def fast_locals(frame):
    """The frame's variables as libpython iterates them (arguments first, in pyframes' order)."""
    variables = frame.get("locals", [])
    return [v for v in variables if v.get("argument")] + [v for v in variables if not v.get("argument")]


def source_line(sources, frame):
    line = sources.line(frame.get("file"), frame.get("line") or 0) if sources else None
    return None if line is None else printable(line.strip())


def frame_repr(frame):
    """'Frame 0x7f..., for file F, line N, in NAME (a=1, b=2)'."""
    arguments = ", ".join("%s=%s" % (printable(v.get("name")), printable(v.get("repr"))) for v in fast_locals(frame))
    return truncated("Frame %#x, for file %s, line %d, in %s (%s)" % (
        frame.get("frame_address") or 0, frame.get("file"), frame.get("line") or 0, frame.get("function"), arguments))


def traceback_lines(stack, unit, sources):
    if unit.kind != "eval":
        return ["  %s" % printable(unit.info)]
    out = []
    for index in unit.frames:
        frame = stack.frame(index)
        out.append('  File "%s", line %d, in %s' % (printable(frame.get("file")), frame.get("line") or 0,
                                                     printable(frame.get("function"))))
        line = source_line(sources, frame)
        if line is not None:
            out.append("    %s" % line)
    return out


def unit_number(unit):
    """gdb's frame number, or where the stacks are not merged the first Python frame's number
    (those of `pyframes bt`)."""
    if unit.level is not None:
        return unit.level
    return unit.frames[0] if unit.frames else 0


def summary_lines(stack, unit, sources):
    if unit.kind != "eval":
        return ["#%d %s" % (unit_number(unit), printable(unit.info))]
    out = []
    for index in unit.frames:
        frame = stack.frame(index)
        out.append("#%d %s" % (unit.level if unit.level is not None else index, frame_repr(frame)))
        line = source_line(sources, frame)
        if line is not None:
            out.append("    %s" % line)
    return out


def truncation_line(thread, summary):
    reason = printable(thread.get("truncation_reason") or "frame chain cut")
    return ("#? (unable to read python frame information: %s)" if summary else
            "  (unable to read python frame information: %s)") % reason


def locals_lines(stack, unit):
    """py-locals: the innermost frame's variables up to 3.10; from 3.11 every frame of the
    evaluation-loop run, each under 'Locals for NAME'."""
    frames = [stack.frame(i) for i in unit.frames]
    if not version_at_least(stack.snapshot, 3, 11):
        frames = frames[:1]
        headers = False
    else:
        headers = True
    out = []
    for frame in frames:
        if headers:
            out.append("Locals for %s" % printable(frame.get("function")))
        out += ["%s = %s" % (printable(v.get("name")), truncated(v.get("repr"))) for v in fast_locals(frame)]
    return out


def listing_lines(lines, first, last, current):
    """py-list's lines first..last (1-based, inclusive) of a file's lines."""
    out = []
    for number in range(max(first, 1), min(last, len(lines)) + 1):
        label = (">%d" if number == current else "%d") % number
        out.append("%4s    %s" % (label, printable(lines[number - 1].rstrip("\r").expandtabs(8))))
    return out
