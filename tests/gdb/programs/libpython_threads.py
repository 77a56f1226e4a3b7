"""CPython's test_threads of Lib/test/test_gdb/test_backtrace.py: four threads run Python code
forever while the main thread stops in id(42); the others wait for the GIL."""
from threading import Thread


class TestThread(Thread):
    def run(self):
        i = 0
        while 1:
            i += 1


t = {}
for i in range(4):
    t[i] = TestThread()
    t[i].daemon = True
    t[i].start()

# Trigger a breakpoint on the main thread
id(42)
