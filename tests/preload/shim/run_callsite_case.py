"""Call-sites and iteration numbers against the interpreter's own view, for one interpreter.

Runs programs/callsite_program.py with libhangshim.so preloaded and compares every recorded
call with the frames the program noted (sys._getframe) when it made the call: file, line and
function of each frame up to the ledger's call-site depth, the hit count of the chain (how many
times a chain with those frames of the job's own issued a call so far: library frames never split
the count, so an engine whose internal path changes keeps counting), the barrier label, the borrowed main-thread
stack of a native thread. Then a two-rank stall: the stack dump shows the blocked line.

    run_callsite_case.py --python PY --helper LIB --shim LIB --hangshim CLI --driver EXE --fakenccl DIR
"""

import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_shim_case import case_arguments, expect, run_case  # noqa: E402

PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs", "callsite_program.py")


def frame_key(frame):
    return (frame["file"], frame["line"], frame["function"])


def check_calls(c, python, helper):
    truth_path = os.path.join(c.dir, "truth.json")
    code, out, err = c.run([python, PROGRAM, "calls", truth_path, helper], c.env(RANK=0, WORLD_SIZE=1))
    expect(code == 0, "the program failed: %s %s" % (out, err))
    expect("hangshim" not in err, "the shim printed: %s" % err)
    with open(truth_path) as f:
        calls = json.load(f)["calls"]
    files = c.ledger_files()
    expect(len(files) == 1, "expected one ledger, got %s" % files)
    ledger = c.read(files[0])
    expect("call-sites" in ledger["process"]["features"], "call-site capture is off")
    major, minor = ledger["process"]["python_version"].split(".")[:2]
    expect((int(major), int(minor)) == sys_version(python), "python version %s" % ledger["process"]["python_version"])
    depth = ledger["tables"]["callsite_depth"]
    sites = {s["id"]: s for s in ledger["callsites"]}
    records = [r for r in ledger["records"] if r["nccl_op"] in ("all_reduce", "broadcast")]
    expect(len(records) == len(calls), "%d recorded calls, the program made %d" % (len(records), len(calls)))
    seen = {}
    for n, (record, call) in enumerate(zip(records, calls)):
        where = "call %d (%s from %s:%d)" % (n, call["op"], call["chain"][0]["file"], call["chain"][0]["line"])
        expect(record["op"] == call["op"], "%s: recorded as %s" % (where, record["op"]))
        expect(record["count"] == call["count"], "%s: count %d" % (where, record["count"]))
        site = sites.get(record["callsite"])
        expect(site is not None, "%s: no call-site" % where)
        want = [frame_key(f) for f in call["chain"][:depth]]
        got = [frame_key(f) for f in site["frames"]]
        expect(got == want, "%s: call-site frames\n  got  %s\n  want %s" % (where, got, want))
        expect(site["truncated"] == (len(call["chain"]) > depth), "%s: truncated flag" % where)
        expect(record["borrowed_stack"] == call["borrowed"] == site["borrowed"], "%s: borrowed flag" % where)
        own = [frame_key(f) for f in site["frames"] if not f.get("library")]  # the job's frames
        key = (tuple(own), call["borrowed"])
        seen[key] = seen.get(key, 0) + 1
        expect(record["callsite_hit"] == seen[key], "%s: iteration %d, the program says %d" %
               (where, record["callsite_hit"], seen[key]))
    engine = [r for r in records if r["count"] == 7]
    expect(len(engine) == 4 and len({r["callsite"] for r in engine}) == 2 and
           [r["callsite_hit"] for r in engine] == [1, 2, 3, 4],
           "the engine's two library paths under one line: call-sites %s, iterations %s (want 2 call-sites, 1-4)" %
           ([r["callsite"] for r in engine], [r["callsite_hit"] for r in engine]))
    for site in sites.values():
        uses = [r for r in records if r["callsite"] == site["id"]]
        expect(site["hits"] == len([r for r in ledger["records"] if r["callsite"] == site["id"]]),
               "call-site %d: hits %d" % (site["id"], site["hits"]))
        expect(site["barrier"] == any(r["op"] == "barrier" for r in uses) or not uses, "call-site %d: barrier" % site["id"])


def sys_version(python):
    out = subprocess.run([python, "-c", "import sys; print(sys.version_info[0], sys.version_info[1])"],
                         stdout=subprocess.PIPE, universal_newlines=True).stdout.split()
    return int(out[0]), int(out[1])


def check_stall(c, python):
    rendezvous = os.path.join(c.dir, "rendezvous")
    os.mkdir(rendezvous)
    truth_path = os.path.join(c.dir, "stall-truth.json")
    procs, err_paths = [], []

    def blocked_where():
        """The program's own record of the line where rank 0 blocks, once it is there."""
        if not os.path.exists(truth_path):
            return None
        with open(truth_path) as f:
            top = json.load(f)["blocked_at"][0]
        return top, "%s:%d in %s" % (top["file"], top["line"], top["function"])

    def stall_lines():
        with open(err_paths[0]) as f:
            return [l for l in f if l.startswith("hangshim: rank 0 ")]

    # No stand-in timeout: rank 0 waits as in a real hang until its stall line for the blocked
    # call is on stderr (a deadline only a missing report reaches); then the job is ended. An
    # earlier call may stall too (rank 1 late to init or the first all_reduce on a loaded
    # machine: the limit is 1 s) and be reported; only the report naming the blocked line counts.
    try:
        for rank in range(2):
            env = c.env(RANK=rank, WORLD_SIZE=2, LOCAL_RANK=rank, HANGSHIM_STALL_SECONDS=1, HANGSHIM_POLL_MS=20)
            err_paths.append(os.path.join(c.dir, "stall-%d.err" % rank))
            with open(err_paths[-1], "w") as err:
                procs.append(subprocess.Popen([python, PROGRAM, "stall", truth_path, rendezvous], env=env,
                                              stdout=subprocess.DEVNULL, stderr=err))

        def reported():
            blocked = blocked_where()
            return blocked is not None and any(blocked[1] in l for l in stall_lines())
        deadline = time.monotonic() + 120
        while not reported():
            expect(all(p.poll() is None for p in procs), "a stall program ended: %s" %
                   [open(path).read() for path in err_paths])
            expect(time.monotonic() < deadline, "no stall reported at the blocked line within 120 s: %s" %
                   open(err_paths[0]).read())
            time.sleep(0.1)
        expect(all(p.poll() is None for p in procs), "the job did not run on after the stall report")
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
    top, where = blocked_where()
    rank0 = [l for l in c.ledger_files() if "-r00000-" in l]
    expect(len(rank0) == 1, "rank 0 ledger missing")
    ledger = c.read(rank0[0])
    # The stall line is printed after the dump is written: the file holds the blocked call's dump.
    stacks = os.path.join(c.ledgers, ledger["process"]["stacks_file"])
    expect(ledger["process"]["stacks_file"] and os.path.exists(stacks), "no stacks file")
    with open(stacks) as f:
        text = f.read()
    line = 'File "%s", line %d, in %s' % (top["file"], top["line"], top["function"])
    expect(line in text, "the stack dump does not show %r:\n%s" % (line, text))
    lines = stall_lines()
    expect(len([l for l in lines if where in l]) == 1, "rank 0 reported the blocked call more than once: %s" % lines)
    expect(where in lines[-1], "a stall reported after the blocked call's: %s" % lines)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--python", required=True)
    p.add_argument("--helper", required=True)
    args = case_arguments(p)

    def body(c):
        check_calls(c, args.python, args.helper)
        for path in c.ledger_files():
            os.unlink(path)
        check_stall(c, args.python)
    return run_case(args, body, "callsite (%s)" % args.python, "callsite %s" % args.python)


if __name__ == "__main__":
    sys.exit(main())
