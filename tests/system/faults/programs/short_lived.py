# A Python process that lives for a moment: recurses with locals, sleeps DELAY seconds, then
# leaves in the way MODE says: "return" (normal exit: the interpreter finalizes, tearing
# frames and objects down while a reader may be walking them), "exit" (os._exit from deep in
# the stack), "raise" (an uncaught exception unwinds every frame). For the fault tests that
# read processes as they die.
import os
import sys
import time


def dive(depth, delay, mode):
    label = "depth %d" % depth
    values = [depth] * (depth % 5)
    if depth:
        return dive(depth - 1, delay, mode)
    time.sleep(delay)
    if mode == "exit":
        os._exit(0)
    if mode == "raise":
        raise SystemExit(label + str(values))
    return label


if __name__ == "__main__":
    dive(40, float(sys.argv[1]), sys.argv[2])
