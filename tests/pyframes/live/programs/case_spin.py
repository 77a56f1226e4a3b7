"""A thread spinning in pure Python while holding the GIL; the main thread sleeps. The spinner
reports its loop's line range (from the code object's line table) instead of one line, and
the main thread publishes only once the spinner is inside its loop."""
import dis
import sys
import threading
import time

import stackrecord

looping = [False]


def lines_after(frame):
    """The range of lines of frame's code after its current line: the loop that follows."""
    lines = [line for _, line in dis.findlinestarts(frame.f_code) if line is not None and line > frame.f_lineno]
    return {"first_line": min(lines), "last_line": max(lines)}


def spin():
    frames = stackrecord.stack_of(sys._getframe())
    counter = 0
    stackrecord.publish("spinner", frames, spin=lines_after(sys._getframe()))
    while True:
        looping[0] = True
        counter += 1
        if counter > 1000000:
            counter = 0


stackrecord.setup(expected=2)
threading.Thread(target=spin, name="spinner", daemon=True).start()
while not looping[0]:
    time.sleep(0.01)
stackrecord.hold("main")
