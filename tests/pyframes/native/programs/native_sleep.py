"""--native target: the main thread blocked in time.sleep two Python calls deep, a second
thread blocked the same way, and a thread spinning in pure Python (the "ticker", whose progress
shows that the process runs on after a dump). Python 3.6 syntax."""
import threading

import stackrecord

ticker_started = threading.Event()
ticks = [0]


def tick():
    stackrecord.setup(expected=2, ticker=stackrecord.native_id())
    ticker_started.set()
    while True:
        ticks[0] += 1


def worker_inner():
    stackrecord.hold("worker")


def worker():
    worker_inner()


def middle():
    stackrecord.hold("main")


def outer():
    middle()


threading.Thread(target=tick, name="ticker", daemon=True).start()
ticker_started.wait()
threading.Thread(target=worker, name="worker", daemon=True).start()
outer()
