"""Threads doing different things, each declaring the state pyframes should see: asleep in
time.sleep, blocked on a lock nobody releases, waiting for an Event, and reading /dev/urandom in
large chunks (FileIO.readinto releases the GIL around read(), which takes tens of milliseconds:
running without it most of the time). `sampled` states hold most of the time, the others always.

No thread spins in Python here (case_states_gil covers holding the GIL): a spinner would make
the reader wait for the GIL after every read for as long as the spinner keeps it, which on a
loaded machine (the spinner descheduled while holding it) was most of the time, and the reader
was then sampled waiting for the GIL instead of running."""
import sys
import threading
import time

import stackrecord

busy = {"reader": False}
held = threading.Lock()
held.acquire()
never = threading.Event()


def sleeper():
    stackrecord.hold("sleeper", expect="idle")


def lock_waiter():
    stackrecord.publish("lock-waiter", stackrecord.stack_of(sys._getframe()), expect="idle", blocking=True)
    held.acquire()


def event_waiter():
    stackrecord.publish("event-waiter", stackrecord.stack_of(sys._getframe()), expect="idle", blocking=True)
    never.wait()


def reader():
    buffer = bytearray(8 * 1024 * 1024)
    stackrecord.publish("reader", stackrecord.stack_of(sys._getframe()), expect="running", sampled=True)
    with open("/dev/urandom", "rb", buffering=0) as noise:
        while True:
            busy["reader"] = True
            noise.readinto(buffer)


stackrecord.setup(expected=5)
for target in (sleeper, lock_waiter, event_waiter, reader):
    threading.Thread(target=target, name=target.__name__, daemon=True).start()
while not all(busy.values()):
    time.sleep(0.01)
stackrecord.hold("main", expect="idle")
