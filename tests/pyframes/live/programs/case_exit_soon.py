"""A process that exits while it is being read: threads with deep stacks start, and after the
delay given as the second argument the process exits (os._exit, mid-run, threads still busy)."""
import os
import sys
import threading
import time

delay = float(sys.argv[2])


def recurse(depth):
    if depth == 0:
        while True:
            time.sleep(0.001)
    return recurse(depth - 1)


for index in range(4):
    threading.Thread(target=recurse, args=(100 + index,), daemon=True).start()
deadline = time.time() + delay
while time.time() < deadline:
    sum(range(1000))
os._exit(0)
