"""The benchmarks' target: a main thread 40 Python frames deep and three workers 20 deep, all
blocked in time.sleep. Prints "ready" once every thread is inside its sleep call.

    bench_target.py [MEGABYTES [MAIN_DEPTH WORKER_DEPTH]]

MEGABYTES (the core benchmark's): that much live heap data besides, random bytes that a core
cannot leave out. MAIN_DEPTH, WORKER_DEPTH: other depths (the pyframes benchmark's 100 and 25)."""
import os
import sys
import threading
import time

blob = [os.urandom(1 << 20) for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 0)]

MAIN_DEPTH, WORKER_DEPTH = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else (40, 20)
DEPTHS = {"MainThread": MAIN_DEPTH, "worker-0": WORKER_DEPTH, "worker-1": WORKER_DEPTH, "worker-2": WORKER_DEPTH}
asleep = threading.Semaphore(0)


def nest(depth):
    if depth == 0:
        asleep.release()
        time.sleep(10 ** 8)
    return nest(depth - 1)


for name in ("worker-0", "worker-1", "worker-2"):
    threading.Thread(target=nest, args=(DEPTHS[name],), name=name, daemon=True).start()
threading.Thread(target=lambda: ([asleep.acquire() for _ in DEPTHS], time.sleep(0.05), print("ready", flush=True)),
                 daemon=True).start()
nest(DEPTHS["MainThread"])
