# A target for the --lock tests: deep recursion with many locals (so a locked read lasts a
# while) and a heartbeat thread that rewrites HEARTBEAT_FILE with a counter every 10 ms, which
# shows from outside whether the process runs. Prints "ready" when both are in place.
import os
import sys
import threading
import time


def heartbeat(path):
    n = 0
    while True:
        n += 1
        with open(path + ".tmp", "w") as f:
            f.write(str(n))
        os.replace(path + ".tmp", path)
        time.sleep(0.01)


def deep(depth, ready):
    a, b, c = [depth] * 3, {"depth": depth, "text": "t" * 20}, ("tuple", depth)
    if depth:
        return deep(depth - 1, ready)
    print("ready", flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    threading.Thread(target=heartbeat, args=(sys.argv[1],), daemon=True).start()
    sys.setrecursionlimit(5000)
    deep(int(sys.argv[2]) if len(sys.argv) > 2 else 800, None)
