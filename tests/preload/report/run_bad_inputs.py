"""Damaged, truncated, foreign and hostile inputs next to good ledgers: `hangshim report` prints
one clear line on stderr for each bad file (naming it and the problem) and still gives the
verdict of the good ones, never crashing or blocking.

    run_bad_inputs.py --hangshim CLI --fixture REPORT_FIXTURE
"""

import argparse
import glob
import json
import os
import subprocess
import sys

from report_test_lib import expect, run_checks


def run(command, **kw):
    return subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=60, **kw)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--hangshim", required=True)
    p.add_argument("--fixture", required=True)
    args = p.parse_args()

    def body(work):
        ledgers = os.path.join(work, "ledgers")
        os.mkdir(ledgers, 0o700)
        made = run([args.fixture, "job", ledgers, "--ranks", "4", "--collectives", "20"])
        expect(made.returncode == 0, "report_fixture job failed: %s" % made.stderr)
        good = run([args.hangshim, "report", "--json", ledgers])
        expect(good.returncode == 0 and not good.stderr, "the good ledgers alone: %d %s" % (good.returncode, good.stderr))
        want = json.loads(good.stdout)["verdict"]
        expect(want["culprits"] == [2] and want["kind"] == "stuck_outside_nccl", "the good verdict: %s" % want)

        source = sorted(glob.glob(os.path.join(ledgers, "*r00001*.ledger")))[0]
        expected = {}  # file name -> words its line must hold
        for mode, words in (("bad-magic", "not a hangshim ledger"), ("truncated", "copy it again"),
                            ("foreign-version", "format version"), ("huge-counts", "ring capacity"),
                            ("overlapping-sections", "overlap"), ("hostile-entries", "damaged entries skipped")):
            name = mode + ".ledger"
            out = run([args.fixture, "damage", mode, source, os.path.join(ledgers, name)])
            expect(out.returncode == 0, "report_fixture damage %s: %s" % (mode, out.stderr))
            expected[name] = words
        os.symlink(source, os.path.join(ledgers, "link.ledger"))
        expected["link.ledger"] = "symbolic link"
        os.mkfifo(os.path.join(ledgers, "fifo.ledger"), 0o600)
        expected["fifo.ledger"] = "not a regular file"
        open(os.path.join(ledgers, "empty.ledger"), "w").close()
        expected["empty.ledger"] = "bytes"
        os.mkdir(os.path.join(ledgers, "dir.ledger"))
        expected["dir.ledger"] = "not a regular file"
        with open(os.path.join(ledgers, "other.json"), "w") as f:
            json.dump({"some": "thing"}, f)
        expected["other.json"] = "not a hangshim export"
        with open(os.path.join(ledgers, "deep.json"), "w") as f:
            f.write("[" * 100000)
        expected["deep.json"] = "nesting deeper"
        with open(os.path.join(ledgers, "future.json"), "w") as f:
            json.dump({"format": "hangshim-export", "version": 99, "ledgers": []}, f)
        expected["future.json"] = "export format version 99"

        out = run([args.hangshim, "report", ledgers])
        expect(out.returncode == 0, "hangshim report exit %d: %s" % (out.returncode, out.stderr))
        lines = [l for l in out.stderr.splitlines() if l.strip()]
        for name, words in expected.items():
            mine = [l for l in lines if name in l]
            expect(len(mine) == 1, "%s: expected one line, got %s\n%s" % (name, mine, out.stderr))
            expect(words in mine[0], "%s: the line lacks %r: %s" % (name, words, mine[0]))
            expect(mine[0].startswith("hangshim: "), "%s: %s" % (name, mine[0]))
        expect(len(lines) == len(expected), "stray stderr lines:\n%s" % out.stderr)
        first = out.stdout.splitlines()[0]
        expect(first.startswith("HANG: rank 2 never issued all_reduce #20"), "the verdict changed: %s" % first)
        bad = run([args.hangshim, "report", "--json", ledgers])
        report = json.loads(bad.stdout)
        expect(report["verdict"]["culprits"] == [2], "JSON verdict: %s" % report["verdict"])
        expect(len(report["errors"]) == len(expected) - 1, "JSON errors: %s" % report["errors"])

        nothing = run([args.hangshim, "report", os.path.join(ledgers, "bad-magic.ledger")])
        expect(nothing.returncode == 1 and "no ledger could be read" in nothing.stderr,
               "only a bad ledger: exit %d: %s" % (nothing.returncode, nothing.stderr))
        usage = run([args.hangshim, "report", "--rank", "x"])
        expect(usage.returncode == 2 and "--rank" in usage.stderr, "usage error: %d %s" % (usage.returncode, usage.stderr))
        # Read on several threads, the bad files are the same lines in the same order, and the
        # report the same (the good ledgers' views close the holes the bad ones leave).
        threaded = run([args.hangshim, "report", "--threads", "4", ledgers])
        expect((threaded.returncode, threaded.stdout, threaded.stderr) == (out.returncode, out.stdout, out.stderr),
               "on 4 threads: exit %d\n%s\n%s" % (threaded.returncode, threaded.stderr, threaded.stdout[:2000]))
        for bad_count in ("0", "x", "257"):
            usage = run([args.hangshim, "report", "--threads", bad_count, ledgers])
            expect(usage.returncode == 2 and len(usage.stderr.splitlines()) == 1 and "--threads" in usage.stderr,
                   "--threads %s: exit %d: %s" % (bad_count, usage.returncode, usage.stderr))

    return run_checks("bad inputs", "hangshim-bad-", body, "one line per bad file, the verdict of the good ones")


if __name__ == "__main__":
    sys.exit(main())
