# Frames that never hold still: every thread recurses down and back up in a loop without
# sleeping, creating and freeing frames (and their locals) millions of times a second, so a
# reader always races the interpreter. Prints "ready" when every thread runs. Functions here
# are named spin_*; a reader must never report a frame of this file under another name.
import sys
import threading


def spin_down(depth, limit, payload):
    local_text = "x" * (depth % 7)
    local_list = [depth, payload, local_text]
    if depth < limit:
        return spin_down(depth + 1, limit, local_list)
    return len(local_list)


def spin_forever(seed):
    n = seed
    while True:
        n = (n * 1103515245 + 12345) % 2147483648
        spin_down(0, 5 + n % 60, {"n": n})


def spin_main():
    started = []
    for i in range(2):
        t = threading.Thread(target=spin_forever, args=(i + 1,), name="spin-%d" % i, daemon=True)
        t.start()
        started.append(t)
    print("ready", flush=True)
    spin_forever(7)


if __name__ == "__main__":
    sys.exit(spin_main())
