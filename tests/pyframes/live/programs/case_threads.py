"""Several threads: named ones (one renamed after start, one non-ASCII), a default-named one,
and a raw _thread thread the threading module does not know (its name comes from
/proc/PID/task/TID/comm, set here with prctl)."""
import _thread
import ctypes
import threading

import stackrecord

PR_SET_NAME = 15


renamed = threading.Event()


def work(label):
    stackrecord.hold(label)


def work_after_rename(label):
    renamed.wait()
    stackrecord.hold(label)


def raw_work():
    ctypes.CDLL(None).prctl(PR_SET_NAME, b"raw-worker", 0, 0, 0)
    stackrecord.hold("raw")


stackrecord.setup(expected=6)
threads = [
    threading.Thread(target=work, args=("loader",), name="data-loader", daemon=True),
    threading.Thread(target=work, args=("unicode",), name=u"\u00fcnic\u00f8de-\u540d\u524d", daemon=True),
    threading.Thread(target=work, args=("default",), daemon=True),
    threading.Thread(target=work_after_rename, args=("renamed",), name="before", daemon=True),
]
for thread in threads:
    thread.start()
threads[3].name = "after-rename"
renamed.set()
_thread.start_new_thread(raw_work, ())
stackrecord.hold("main")
