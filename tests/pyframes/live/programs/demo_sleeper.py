"""A small program for the demo: a main thread and a worker, both blocked at known lines."""
import threading
import time


def worker_loop():
    while True:
        time.sleep(0.5)


def train(step):
    if step == 3:
        time.sleep(3600)
    return train(step + 1)


threading.Thread(target=worker_loop, name="data-loader", daemon=True).start()
train(0)
