"""Several threads at different depths, named and default-named, and the main thread."""
import threading

import core_record


def deeper(label, depth):
    if depth == 0:
        core_record.hold(label)
    else:
        deeper(label, depth - 1)


def work(label, depth):
    deeper(label, depth)


core_record.setup(expected=4)
threads = [
    threading.Thread(target=work, args=("loader", 0), name="data-loader", daemon=True),
    threading.Thread(target=work, args=("writer", 3), name="checkpoint-writer", daemon=True),
    threading.Thread(target=work, args=("default", 1), daemon=True),
]
for thread in threads:
    thread.start()
work("main", 2)
