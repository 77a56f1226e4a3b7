"""Threads doing different things, each declaring the state pyframes should see: asleep in
time.sleep, blocked on a lock nobody releases, waiting for an Event, spinning in Python (holds
the GIL most of the time) and reading /dev/urandom in large chunks (FileIO.readinto releases
the GIL around read(), which takes tens of milliseconds: running without it most of the time). `sampled` states hold most of the time, the others always."""
import sys
import threading
import time

import stackrecord

busy = {"spinner": False, "reader": False}
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


def spinner():
    stackrecord.publish("spinner", stackrecord.stack_of(sys._getframe()), expect="holds_gil", sampled=True)
    counter = 0
    while True:
        busy["spinner"] = True
        counter += 1


def reader():
    buffer = bytearray(8 * 1024 * 1024)
    stackrecord.publish("reader", stackrecord.stack_of(sys._getframe()), expect="running", sampled=True)
    with open("/dev/urandom", "rb", buffering=0) as noise:
        while True:
            busy["reader"] = True
            noise.readinto(buffer)


stackrecord.setup(expected=6)
for target in (sleeper, lock_waiter, event_waiter, spinner, reader):
    threading.Thread(target=target, name=target.__name__, daemon=True).start()
while not all(busy.values()):
    time.sleep(0.01)
stackrecord.hold("main", expect="idle")
