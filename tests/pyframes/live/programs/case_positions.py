"""Column ranges (3.11+): a thread blocks in the second call of `reduce(a) + reduce(b)` (with the
argument "first": in the first), called
from a line with a non-ASCII name before the call, called by a call that spans two lines. The
blocking function records, for every frame that calls it, what the interpreter says the frame
runs: f_lineno and, from 3.11, code.co_positions() of the frame's current instruction (line,
end line, column, end column). Python 3.6 syntax."""
import sys
import time

import stackrecord


def block():
    frames = []
    frame = sys._getframe(1)
    while frame is not None:
        entry = {"function": frame.f_code.co_name, "line": frame.f_lineno}
        if hasattr(frame.f_code, "co_positions"):
            entry["position"] = list(frame.f_code.co_positions())[frame.f_lasti // 2]
        frames.append(entry)
        frame = frame.f_back
    stackrecord.publish("main", stackrecord._at_line(stackrecord.stack_of(sys._getframe()), sys._getframe().f_lineno), blocking=True, positions=frames); time.sleep(10 ** 8)  # noqa: E501,E702


def reduce(value, stop):
    if stop:
        block()
    return value


def train(a, b):
    naïve = reduce(a, FIRST) + reduce(b, not FIRST)
    return naïve


FIRST = len(sys.argv) > 2 and sys.argv[2] == "first"  # block in the first call instead


train(
    1, 2)
