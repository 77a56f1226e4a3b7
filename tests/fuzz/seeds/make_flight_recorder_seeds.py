"""Seed dumps for fuzz_flight_recorder (scripts/fuzz.sh makes them):

  * dumps built with Python's pickle (protocol 2) to the published schema
    (tests/preload/report/flight_recorder_lib.py): the tutorial's crash.py at versions 2.3, 2.5 and 2.10,
    a sub-group with sends and receives;
  * the same written the way the TorchScript pickler writes a real dump
    (torch/csrc/jit/serialization/pickler.cpp with tag_aggregates off): every string once, then
    BINGET; a dict shared between entries (the frames) memoized and fetched by BINGET; MARK and
    APPENDS/SETITEMS even for one item; ints beyond 32 bits as LONG1 of 8 bytes.

    make_flight_recorder_seeds.py DIR
"""

import os
import pickle
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "preload", "report"))
from flight_recorder_lib import dump, entry, frames  # noqa: E402


class TorchScriptStyle(object):
    """Protocol 2 as pickler.cpp writes it (a small emulation for seeds, not PyTorch's code)."""

    def __init__(self):
        self.out = bytearray(b"\x80\x02")
        self.memo = 0
        self.strings = {}
        self.shared = {}  # id(dict) -> memo index, for values reached more than once

    def put(self):
        self.out += b"q" + bytes([self.memo]) if self.memo < 256 else b"r" + struct.pack("<I", self.memo)
        self.memo += 1
        return self.memo - 1

    def get(self, index):
        self.out += b"h" + bytes([index]) if index < 256 else b"j" + struct.pack("<I", index)

    def value(self, v, counts):
        if v is None:
            self.out += b"N"
        elif isinstance(v, bool):
            self.out += b"\x88" if v else b"\x89"
        elif isinstance(v, int):
            if 0 <= v < 256:
                self.out += b"K" + bytes([v])
            elif 0 <= v < 65536:
                self.out += b"M" + struct.pack("<H", v)
            elif -2**31 <= v < 2**31:
                self.out += b"J" + struct.pack("<i", v)
            else:
                self.out += b"\x8a\x08" + struct.pack("<q", v)
        elif isinstance(v, float):
            self.out += b"G" + struct.pack(">d", v)
        elif isinstance(v, str):
            if v in self.strings:
                self.get(self.strings[v])
            else:
                data = v.encode("utf-8")
                self.out += b"X" + struct.pack("<I", len(data)) + data
                self.strings[v] = self.put()
        elif isinstance(v, tuple):
            for x in v:
                self.value(x, counts)
            self.out += {0: b")", 1: b"\x85", 2: b"\x86", 3: b"\x87"}[len(v)]
        elif isinstance(v, (list, dict)):
            if id(v) in self.shared:
                self.get(self.shared[id(v)])
                return
            self.out += b"](" if isinstance(v, list) else b"}("
            for x in (v if isinstance(v, list) else [y for kv in v.items() for y in kv]):
                self.value(x, counts)
            self.out += b"e" if isinstance(v, list) else b"u"
            if counts.get(id(v), 0) > 1:
                self.shared[id(v)] = self.put()
        else:
            raise TypeError(type(v))


def references(v, counts):
    counts[id(v)] = counts.get(id(v), 0) + 1
    if counts[id(v)] > 1:
        return
    if isinstance(v, (list, tuple)):
        for x in v:
            references(x, counts)
    elif isinstance(v, dict):
        for x in v.values():
            references(x, counts)


def torchscript_style(d):
    counts = {}
    references(d, counts)
    w = TorchScriptStyle()
    w.value(d, counts)
    return bytes(w.out + b".")


def crash_py(rank, version):
    shared = frames("/job/crash.py", 22)  # one list of frames reached from two entries, as PyTorch shares them
    es = [entry(0, 1, [3, 4], "completed", shared, version=version), entry(1, 2, [3, 4], "completed", shared, version=version)]
    es.append(entry(2, 3, [4, 5] if rank == 0 else [3, 4], "scheduled", frames("/job/crash.py", 28 if rank == 0 else 32),
                    version=version))
    return dump(4, es, version=version)


def subgroup_p2p():
    groups = {"0": ("default_pg", [0, 1, 2, 3]), "1": ("undefined", [1, 2, 3])}
    es = [entry(0, 1, [8], "completed", frames("/job/pp.py", 10)),
          entry(1, 0, [4, 2], "completed", frames("/job/pp.py", 20), pg=("1", "undefined"), op="send 0->1", p2p_seq=1,
                is_p2p=True),
          entry(2, 0, [4, 2], "scheduled", frames("/job/pp.py", 21), pg=("1", "undefined"), op="recv 0<-2", p2p_seq=2,
                is_p2p=True),
          entry(3, 1, [12], "started", frames("/job/pp.py", 30), pg=("1", "undefined"), op="_allgather_base")]
    es[3]["output_sizes"] = [[36]]
    return dump(4, es, groups=groups)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    seeds = {"crash-2.3-rank0": crash_py(0, "2.3"), "crash-2.5-rank1": crash_py(1, "2.5"),
             "crash-2.10-rank0": crash_py(0, "2.10"), "subgroup-p2p-rank1": subgroup_p2p()}
    for name, d in seeds.items():
        with open(os.path.join(out, name + ".pickle"), "wb") as f:
            pickle.dump(d, f, protocol=2)
        data = torchscript_style(d)
        if pickle.loads(data) != d:
            raise SystemExit("make_flight_recorder_seeds.py: the TorchScript-style %s does not load as the dump" % name)
        with open(os.path.join(out, name + ".torchscript"), "wb") as f:
            f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
