"""Inside a distribution root (tests/system/release/in_root_checks.sh): the system's gdb, with the
release wheel's gdb extension, runs `py-bt` on a live process of the system's python3, and the
stack it prints is compared with the one the process wrote itself (traceback.extract_stack,
written just before it goes to sleep in the innermost function).

    root_py_bt.py --extension FILE

Every frame of the target's own stack must be in py-bt's output, innermost first as py-bt
prints them: the same file and function, and for the calling frames the same line (the
innermost frame's line moved on, from writing its stack to sleeping). Prints one line,
"ok: ..." or "FAILED: ..."; exit 0 or 1.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

TARGET = r'''
import json, sys, time, traceback


def py_bt_target_leaf(path):
    stack = [(f[0], f[1], f[2]) for f in traceback.extract_stack()]
    with open(path + ".tmp", "w") as out:
        json.dump(stack, out)
    __import__("os").rename(path + ".tmp", path)
    time.sleep(300)


def py_bt_target_middle(path):
    py_bt_target_leaf(path)


def py_bt_target_outer(path):
    py_bt_target_middle(path)


py_bt_target_outer(sys.argv[1])
'''

_PY_BT_FRAME = re.compile(r'^\s*File "(.*)", line (\d+), in (.*)$')


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--extension", required=True)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="hangshim-py-bt-")
    script = os.path.join(work, "py_bt_target.py")
    stack_path = os.path.join(work, "stack.json")
    with open(script, "w") as f:
        f.write(TARGET)
    target = subprocess.Popen([sys.executable, script, stack_path])
    try:
        for _ in range(100):
            if os.path.exists(stack_path) or target.poll() is not None:
                break
            time.sleep(0.1)
        if not os.path.exists(stack_path):
            print("FAILED: gdb py-bt: the target wrote no stack (exit %s)" % target.poll())
            return 1
        with open(stack_path) as f:
            truth = [tuple(frame) for frame in json.load(f)][::-1]  # innermost first, as py-bt
        gdb = subprocess.run(["gdb", "-batch", "-nx", "-p", str(target.pid), "-x", args.extension,
                              "-ex", "py-bt"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             universal_newlines=True, timeout=120)
        shown = [(m.group(1), int(m.group(2)), m.group(3))
                 for m in map(_PY_BT_FRAME.match, gdb.stdout.splitlines()) if m]
        # py-bt's frames, innermost first, must hold the truth's in order; the innermost one by
        # file and function (its line moved on), the others by file, line and function.
        position = 0
        missing = []
        for depth, (file, line, function) in enumerate(truth):
            for i in range(position, len(shown)):
                f, n, name = shown[i]
                if f == file and name == function and (depth == 0 or n == line):
                    position = i + 1
                    break
            else:
                missing.append("%s:%d in %s" % (os.path.basename(file), line, function))
        if missing or not shown:
            print("FAILED: gdb py-bt on %s: lacks %s (the target's own stack, innermost first: %s); gdb said:\n%s"
                  % (sys.version.split()[0], ", ".join(missing) or "every frame",
                     ["%s:%d %s" % (os.path.basename(f), n, name) for f, n, name in truth], gdb.stdout[-3000:]))
            return 1
        print("ok: gdb py-bt on a live python %s shows its own stack: %s" % (
            sys.version.split()[0], " <- ".join(function for _, _, function in truth)))
        return 0
    finally:
        target.kill()
        target.wait()
        subprocess.call(["rm", "-rf", work])


if __name__ == "__main__":
    sys.exit(main())
