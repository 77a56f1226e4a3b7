"""The GIL held hostage: the main thread calls libc's sleep() through ctypes.PyDLL, which keeps
the GIL during the call. A thread that wakes from time.sleep every 50 ms then waits for the GIL
forever; a thread blocked on an ordinary lock and one in a long time.sleep stay idle (their
futex is not the GIL's). Each thread declares the state pyframes should see once main is in
the call. The switch interval is made huge first, so a thread waiting for the GIL sleeps in
one long wait instead of waking every 5 ms (a busy machine would catch it runnable) and never
asks the holder to drop it (so every thread gives the GIL up only when it blocks).
A free-threaded build with its GIL off (the interpreter says so) has no GIL to hold or wait
for: main is then only in a C call and the waiter only sleeps, both idle."""
import ctypes
import sys
import threading
import time

import stackrecord

GIL = getattr(sys, "_is_gil_enabled", lambda: True)()
held = threading.Lock()
held.acquire()


def waiter():
    # With the GIL off it sleeps 50 ms at a time and runs Python in between: idle most of the
    # time, caught running now and then on a busy machine (sampled).
    stackrecord.publish("gil-waiter", stackrecord.stack_of(sys._getframe()), expect="waiting_for_gil" if GIL else "idle",
                        sampled=not GIL)
    while True:
        time.sleep(0.05)


def lock_waiter():
    stackrecord.publish("lock-waiter", stackrecord.stack_of(sys._getframe()), expect="idle", blocking=True)
    held.acquire()


def sleeper():
    stackrecord.hold("sleeper", expect="idle")


def settled(tids):
    """True when the threads have slept through 5 checks in a row while the GIL was free in
    between (a thread that only waited for the GIL would have taken it): they are blocked in
    their calls."""
    for _ in range(5):
        for tid in tids:
            with open("/proc/self/task/%d/stat" % tid, errors="replace") as stat:
                text = stat.read()
            if text[text.rfind(")") + 2] != "S":
                return False
        time.sleep(0.02)
    return True


sys.setswitchinterval(1000.0)
stackrecord.setup(expected=4)
for target in (lock_waiter, sleeper):
    threading.Thread(target=target, name=target.__name__, daemon=True).start()
while len(stackrecord._records) < 2 or not settled([r["native_id"] for r in stackrecord._records]):
    time.sleep(0.01)
threading.Thread(target=waiter, name="waiter", daemon=True).start()
while len(stackrecord._records) < 3:
    time.sleep(0.01)
libc = ctypes.PyDLL(None)  # PyDLL: the GIL is not released around calls
stackrecord.publish("main", stackrecord.stack_of(sys._getframe()), expect="holds_gil" if GIL else "idle"); libc.sleep(100000)  # noqa: E501,E702
