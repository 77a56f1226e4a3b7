# The process make_walker_seed records: a few threads whose frames hold locals of every kind
# the object readers decode (str in all three PEP 393 widths, bytes, ints small and big,
# floats, None/bools, lists, tuples, dicts, instances with managed dicts, cells), a generator
# and some recursion. Prints "ready" once every thread is in place, then sleeps.
import sys
import threading
import time


class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y


class Announce:
    """Tells the recorder that every thread, the main one last, is in place."""

    def set(self):
        print("ready", flush=True)


def leaf(depth, ready):
    text = "ascii text"
    latin = "caf\xe9"
    wide = "\u4e2d\u6587"
    astral = "\U0001f600 ok"
    data = b"\x00\x01bytes'\""
    small, big, negative = 7, 2 ** 100, -(2 ** 70)
    ratio, special = 0.25, float("inf")
    nothing, flag = None, True
    items = [1, "two", 3.0, [4, (5, 6)], {"seven": 8}]
    pair = (text, small)
    table = {"a": 1, "b": [2, 3], 4: "four", (5, 6): None}
    point = Point(1, "y")
    ready.set()
    while True:
        time.sleep(3600)


def recurse(depth, ready):
    if depth == 0:
        return leaf(depth, ready)
    return recurse(depth - 1, ready)


def counter():
    n = 0
    while True:
        yield n
        n += 1


def worker(ready):
    gen = counter()
    next(gen)
    captured = "closure"

    def inner():
        return captured + str(next(gen))

    inner()
    recurse(3, ready)


def main():
    events = [threading.Event() for _ in range(2)]
    threads = [threading.Thread(target=worker, args=(e,), name="worker-%d" % i, daemon=True)
               for i, e in enumerate(events)]
    for t in threads:
        t.start()
    for e in events:
        e.wait()
    recurse(2, Announce())


if __name__ == "__main__":
    sys.exit(main())
