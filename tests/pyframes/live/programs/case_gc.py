"""The garbage collector's state. Mode "collecting": a cycle of objects whose __del__ blocks is
collected by gc.collect(), so the thread blocks inside a collection; mode "idle": the thread
blocks outside any collection. A gc.callbacks hook records the phase the collector last
reported ("start" without "stop": a collection runs), and that is the ground truth
("collecting"). Python 3.6 syntax."""
import gc
import sys

import stackrecord

phase = {"last": None}


def on_gc(what, info):
    phase["last"] = what


class Finalized(object):
    def __init__(self):
        self.me = self  # a cycle: only the collector frees it

    def __del__(self):
        stackrecord.hold("main", collecting=phase["last"] == "start", gc_enabled=gc.isenabled())


def main(mode):
    gc.callbacks.append(on_gc)
    if mode == "collecting":
        Finalized()
        gc.collect()
    else:
        stackrecord.hold("main", collecting=phase["last"] == "start", gc_enabled=gc.isenabled())


main(sys.argv[2])
