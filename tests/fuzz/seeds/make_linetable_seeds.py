#!/usr/bin/env python3
"""Writes fuzz_linetable seeds from the real line tables every interpreter produced
(tests/pyframes/unit/fixtures/linetables/*.json): format byte, firstlineno, an offset, the table.

    make_linetable_seeds.py FIXTURE_DIR OUT_DIR
"""
import json
import os
import struct
import sys


def table_format(version):
    major, minor = (int(x) for x in version.split(".")[:2])
    if (major, minor) <= (3, 9):
        return 0  # LineTableFormat::Lnotab
    if (major, minor) == (3, 10):
        return 1  # Linetable310
    return 2  # Locations311


def main():
    fixtures, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    count = 0
    for name in sorted(os.listdir(fixtures)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(fixtures, name)) as f:
            fixture = json.load(f)
        fmt = table_format(fixture["version"])
        for i, code in enumerate(fixture["code_objects"]):
            table = bytes.fromhex(code["table"])
            offset = max(0, code.get("code_bytes", 2) - 2)
            seed = struct.pack("<Bii", fmt, code["firstlineno"], offset) + table
            with open(os.path.join(out, "%s-%d" % (name[:-5], i)), "wb") as f:
                f.write(seed)
            count += 1
    print("%d line-table seeds in %s" % (count, out))


if __name__ == "__main__":
    main()
