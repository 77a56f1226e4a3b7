"""Two threads asleep and the main thread calling os.abort(): run with CORE_RECORD_ABORT=1 and
core dumps enabled, the kernel writes the core (SIGABRT)."""
import threading

import core_record


def worker(label):
    core_record.hold(label)


def crash():
    core_record.hold("main")


core_record.setup(expected=3)
for name in ("worker-1", "worker-2"):
    threading.Thread(target=worker, args=(name,), name=name, daemon=True).start()
crash()
