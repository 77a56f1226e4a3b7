"""The Python process the installed library reads (tests/system/install/run_install_test.py).

    target.py TRUTH_FILE

Writes its own stack, as the interpreter reports it (traceback.extract_stack: file, line and
function of every frame, outermost first), to TRUTH_FILE, then says "ready" on stdout and
blocks, all from one line: once "ready" is out, the stack stays the one recorded until stdin
closes (nothing after the flush calls a Python function). A few nested calls make the stack
worth comparing."""

import json
import sys
import traceback


def block(truth_file):
    stack = traceback.extract_stack(); publish(truth_file, stack); sys.stdout.write("ready\n"); sys.stdout.flush(); sys.stdin.read()  # noqa: E501,E702


def publish(truth_file, stack):
    with open(truth_file, "w") as f:
        json.dump([[s.filename, s.lineno, s.name] for s in stack], f)


class Loader(object):
    def __iter__(self):
        block(sys.argv[1])
        yield 1


def train():
    for _ in Loader():
        pass


if __name__ == "__main__":
    train()
