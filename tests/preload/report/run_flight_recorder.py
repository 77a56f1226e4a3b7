"""`hangshim report` on PyTorch Flight Recorder dumps, and `hangshim export --format
flight-recorder` back to them.

  --part dumps       dumps built with Python's pickle to the published schema (versions 2.3, 2.5,
                     2.10 key sets) for hang shapes: rank 0 did an extra all_reduce (the tutorial's
                     crash.py), a rank's dump missing, sizes that disagree on a sub-group, a rank
                     that never issued the collective; `hangshim report DIR` (no preload, no
                     ledger) names the right ranks, collective and line. Damaged dumps beside good
                     ones (cut, garbage, empty, another version, not a dict, protocol 4, no
                     entries, no pg_config, a pickle that would import code) each give one error
                     line naming the file, and the good ones are still diagnosed.
  --part round-trip  a stand-in job per hang scenario (tests/system/scenarios) run with the shim and left
                     hung; its ledgers -> `hangshim export --format flight-recorder` -> every dump
                     loaded with pickle.load and checked the way PyTorch's analyser reads dumps
                     (flight_recorder_lib.check_analyser_schema; and by torchfrtrace itself where
                     the Python running this has torch >= 2.5) -> `hangshim report` on the dumps
                     gives the verdict the ledgers give.

    run_flight_recorder.py --part dumps --hangshim CLI
    run_flight_recorder.py --part round-trip --hangshim CLI --shim LIB --fakenccl DIR [--python PY]
"""

import argparse
import collections
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from flight_recorder_lib import SchemaError, check_analyser_schema, dump, entry, frames, write_dumps  # noqa: E402
from report_test_lib import Failure, Workspace, expect  # noqa: E402

SCRIPT = "/job/crash.py"
LINES = {"first_loop": 22, "extra": 28, "second_loop": 32, "subgroup": 40}


def hangshim(args, *arguments):
    env = dict(os.environ)
    env.pop("HANGSHIM_LIBRARY_PATHS", None)
    p = subprocess.run([args.hangshim] + list(arguments), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=60, env=env)
    return p.returncode, p.stdout, p.stderr


def report(args, directory):
    code, out, err = hangshim(args, "report", "--json", directory)
    expect(code == 0, "hangshim report --json %s: exit %d: %s" % (directory, code, err.strip()))
    return json.loads(out), err


def first_line(args, directory):
    code, out, err = hangshim(args, "report", directory)
    expect(code == 0, "hangshim report %s: exit %d: %s" % (directory, code, err.strip()))
    return out.splitlines()[0], err


def check_verdict(got, kind, culprits, seq, op, comm_ranks, label):
    v = got["verdict"]
    expect(v["kind"] == kind, "%s: verdict %s, expected %s: %s" % (label, v["kind"], kind, v["summary"]))
    expect(v.get("culprits") == culprits, "%s: culprits %s, expected %s: %s" % (label, v.get("culprits"), culprits, v["summary"]))
    expect(v.get("seq") == seq and v.get("op") == op, "%s: %s #%s, expected %s #%d" % (label, v.get("op"), v.get("seq"), op, seq))
    expect(sorted(v["comm"]["ranks"]) == comm_ranks, "%s: on ranks %s, expected %s" % (label, v["comm"]["ranks"], comm_ranks))


def crash_py(world, version="2.5"):
    """The tutorial's crash.py: two all_reduces, rank 0 an extra one (4x5), two more; every rank
    blocks in collective #3."""
    out = {}
    for rank in range(world):
        es = [entry(0, 1, [3, 4], "completed", frames(SCRIPT, LINES["first_loop"]), version=version),
              entry(1, 2, [3, 4], "completed", frames(SCRIPT, LINES["first_loop"]), version=version)]
        if rank == 0:
            es.append(entry(2, 3, [4, 5], "scheduled", frames(SCRIPT, LINES["extra"]), version=version))
        else:
            es.append(entry(2, 3, [3, 4], "started", frames(SCRIPT, LINES["second_loop"]), version=version))
        out[rank] = dump(world, es, version=version)
    return out


def part_dumps(args, work):
    # The tutorial's hang, with the key sets of three versions (2.3: no thread keys; 2.10: thread
    # keys, duration_ms, comm_lib_version, ranks written without spaces).
    for version in ("2.3", "2.5", "2.10"):
        d = os.path.join(work, "crash-" + version)
        dumps = crash_py(4, version)
        if version == "2.10":
            for x in dumps.values():
                x["pg_config"]["0"]["ranks"] = "[0,1,2,3]"
        write_dumps(d, dumps)
        got, err = report(args, d)
        expect(not err.strip(), "version %s: errors on good dumps: %s" % (version, err.strip()))
        check_verdict(got, "extra_collective", [0], 3, "all_reduce", [0, 1, 2, 3], "crash.py, version " + version)
        line, _ = first_line(args, d)
        for needed in ("rank 0 issued an extra all_reduce #3", "crash.py:%d" % LINES["extra"], "ranks 1-3",
                       "crash.py:%d" % LINES["second_loop"]):
            expect(needed in line, "version %s: the verdict line lacks %r: %s" % (version, needed, line))
        expect(got["ranks"][0]["current"]["count"] == 20 and got["ranks"][1]["current"]["count"] == 12,
               "the counts are not the tensors' elements (20 and 12): %s" % [r["current"] for r in got["ranks"]])
        expect(got["ranks"][0]["current"]["dtype"] == "float32", "Float is not read as float32: %s" % got["ranks"][0]["current"])

    # A rank's dump missing: the others wait, and the report says whose dump to collect.
    d = os.path.join(work, "missing")
    dumps = crash_py(4)
    del dumps[3]
    for x in dumps.values():
        x["entries"][2]["profiling_name"] = "nccl:all_reduce"
        x["entries"][2]["input_sizes"] = x["entries"][2]["output_sizes"] = [[3, 4]]
        x["entries"][2]["frames"] = frames(SCRIPT, LINES["second_loop"])
    write_dumps(d, dumps)
    got, _ = report(args, d)
    v = got["verdict"]
    expect(v["kind"] == "missing_ledgers" and v["seq"] == 3 and v["comm"]["nranks"] == 4,
           "a missing dump: verdict %s: %s" % (v["kind"], v["summary"]))
    line, _ = first_line(args, d)
    expect("its rank(s) 3 have no dump here" in line, "a missing dump is not named as one: %s" % line)

    # Sizes that disagree on a sub-group (ranks 1-3, its own group "1"): rank 3 passes 9 elements.
    d = os.path.join(work, "sizes")
    groups = {"0": ("default_pg", [0, 1, 2, 3]), "1": ("undefined", [1, 2, 3])}
    dumps = {}
    for rank in range(4):
        es = [entry(0, 1, [3, 4], "completed", frames(SCRIPT, LINES["first_loop"]))]
        if rank > 0:
            sizes = [3, 3] if rank == 3 else [3, 4]
            es.append(entry(1, 1, [3, 4], "completed", frames(SCRIPT, LINES["subgroup"]), pg=("1", "undefined")))
            es.append(entry(2, 2, sizes, "scheduled", frames(SCRIPT, LINES["subgroup"]), pg=("1", "undefined")))
        dumps[rank] = dump(4, es, groups=groups)
    write_dumps(d, dumps)
    got, _ = report(args, d)
    check_verdict(got, "count_mismatch", [3], 2, "all_reduce", [1, 2, 3], "sizes that disagree on a sub-group")

    # A rank that never issued #3 (it is elsewhere: the dump cannot say where).
    d = os.path.join(work, "never")
    dumps = crash_py(4)
    for rank, x in dumps.items():
        if rank == 0:
            x["entries"][2] = entry(2, 3, [3, 4], "scheduled", frames(SCRIPT, LINES["second_loop"]))
        if rank == 2:
            x["entries"].pop()
    write_dumps(d, dumps)
    got, _ = report(args, d)
    check_verdict(got, "stuck_outside_nccl", [2], 3, "all_reduce", [0, 1, 2, 3], "a rank that never issued #3")

    # Damaged dumps beside good ones: one error line each, naming the file; the rest diagnosed.
    d = os.path.join(work, "damaged")
    good = crash_py(4)
    write_dumps(d, good)
    whole = pickle.dumps(good[1], protocol=2)
    damaged = {
        "trace_5": whole[: len(whole) * 3 // 5],                                      # cut
        "trace_6": bytes(range(7, 7 + 200)),                                          # garbage
        "trace_7": b"",                                                               # empty
        "trace_8": pickle.dumps(dict(good[1], version="3.0"), protocol=2),            # another major version
        "trace_9": pickle.dumps([good[1]], protocol=2),                               # not a dict
        "trace_10": pickle.dumps(good[1], protocol=4),                                # Python's default protocol
        "trace_11": pickle.dumps({"version": "2.5", "pg_config": {}}, protocol=2),    # no entries
        "trace_12": pickle.dumps({"version": "2.5", "entries": []}, protocol=2),      # no pg_config
        "trace_13": pickle.dumps(collections.OrderedDict(version="2.5"), protocol=2),  # GLOBAL/REDUCE: would import code
    }
    expected = {
        "trace_5": "Flight Recorder dump cut short: the file ends at byte %d" % (len(whole) * 3 // 5),
        "trace_6": "named like the Flight Recorder dumps beside it (trace_<rank>) but not one: it does not start as a pickle",
        "trace_7": "named like the Flight Recorder dumps beside it (trace_<rank>) but not one: it is empty",
        "trace_8": "Flight Recorder dump version \"3.0\"; hangshim reads versions 2.x",
        "trace_9": "a pickle of a list, not a Flight Recorder dump",
        "trace_10": "pickle protocol 4 (PROTO at byte 0); Flight Recorder dumps are protocol 2",
        "trace_11": "a pickled dict without \"entries\", not a Flight Recorder dump",
        "trace_12": "a Flight Recorder dump without a \"pg_config\" dict",
        "trace_13": "(GLOBAL) is not one a Flight Recorder dump uses at byte 2",
    }
    for name, data in damaged.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
    got, err = report(args, d)
    check_verdict(got, "extra_collective", [0], 3, "all_reduce", [0, 1, 2, 3], "good dumps beside damaged ones")
    lines = [l for l in err.splitlines() if l.strip()]
    for name, text in expected.items():
        mine = [l for l in lines if l.startswith("hangshim: %s/%s: " % (d, name))]
        expect(len(mine) == 1, "%s: %d error lines, expected one: %s" % (name, len(mine), lines))
        expect(text in mine[0], "%s: the error line lacks %r: %s" % (name, text, mine[0]))
    expect(len(lines) == len(expected), "error lines beyond one per damaged dump: %s" % lines)
    expect(len(got["errors"]) == len(expected), "--json errors: %s" % got["errors"])

    # An entry the report cannot use is skipped with a warning; the rest of the dump is used.
    d = os.path.join(work, "entry")
    dumps = crash_py(4)
    del dumps[1]["entries"][0]["collective_seq_id"]
    write_dumps(d, dumps)
    got, err = report(args, d)
    check_verdict(got, "extra_collective", [0], 3, "all_reduce", [0, 1, 2, 3], "a dump with a damaged entry")
    notes = json.dumps(got)
    expect("entry 0: no \\\"collective_seq_id\\\"" in notes, "the skipped entry is not mentioned: %s" % got.get("damaged"))


# Each scenario's verdict from its ledgers, and from the dumps exported from them. Dumps say
# nothing of exits, roots or liveness: a rank that exited reads as one outside NCCL (same culprit,
# same collective), and a broadcast whose root differs cannot be told from a stuck one (left out).
ROUND_TRIP = ["flight_recorder", "size_mismatch", "dtype_mismatch", "barrier_skipped", "ddp_uneven", "subgroup_hang",
              "stuck_dataloader", "rank_crash", "healthy"]
DUMP_KIND = {"rank_exited": "stuck_outside_nccl"}


def torchfrtrace(python):
    """The command running PyTorch's analyser with `python`, or None when its torch has none (< 2.5)."""
    probe = subprocess.run([python, "-c", "import torch.distributed.flight_recorder.fr_trace"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True)
    return [python, "-m", "torch.distributed.flight_recorder.fr_trace"] if probe.returncode == 0 else None


def part_round_trip(args):
    ws = Workspace(args)
    analyser = torchfrtrace(args.python)
    print("torchfrtrace: %s" % ("runs with " + args.python if analyser else
                                "not in %s's torch (it needs torch >= 2.5): its loader's rules are checked instead" % args.python))
    try:
        for name in ROUND_TRIP:
            shutil.rmtree(ws.ledgers)
            os.mkdir(ws.ledgers, 0o700)
            truth, status = ws.launch(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "system",
                                                   "scenarios", name + ".py"), 4, args.python)
            expect(status["state"] == ("hung" if truth["hang"] else "exited"), "%s: the job ended %s" % (name, status["state"]))
            from_ledgers = ws.report_json(ws.ledgers)
            out = os.path.join(ws.dir, "fr-" + name)
            code, _, err = ws.hangshim("export", "--format", "flight-recorder", "-o", out, ws.ledgers)
            expect(code == 0, "%s: export --format flight-recorder: exit %d: %s" % (name, code, err))
            expect("wrote 4 Flight Recorder dump(s) (version 2.10, ranks 0-3)" in err, "%s: export said %s" % (name, err))
            try:
                dumps = check_analyser_schema(out, "nccl_trace_rank_")
            except SchemaError as e:
                raise Failure("%s: PyTorch's analyser would refuse the dumps: %s" % (name, e))
            expect(sorted(dumps) == [0, 1, 2, 3], "%s: dumps of ranks %s" % (name, sorted(dumps)))
            if analyser:
                run = subprocess.run(analyser + [out, "--prefix", "nccl_trace_rank_"], stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, universal_newlines=True, timeout=120)
                expect(run.returncode == 0, "%s: torchfrtrace failed on the dumps:\n%s" % (name, run.stdout[-3000:]))
            from_dumps = ws.report_json(out)
            a, b = from_ledgers["verdict"], from_dumps["verdict"]
            expect(b["kind"] == DUMP_KIND.get(a["kind"], a["kind"]),
                   "%s: the dumps give %s (%s), the ledgers %s (%s)" % (name, b["kind"], b["summary"], a["kind"], a["summary"]))
            for key in ("culprits", "seq", "op", "problem"):
                expect(a.get(key) == b.get(key), "%s: %s %s from the dumps, %s from the ledgers: %s" %
                       (name, key, b.get(key), a.get(key), b["summary"]))
            if "comm" in a:
                expect(sorted(a["comm"]["ranks"]) == sorted(b["comm"]["ranks"]), "%s: communicator %s vs %s" % (name, b["comm"], a["comm"]))
            expect(not from_dumps["errors"], "%s: errors reading the exported dumps: %s" % (name, from_dumps["errors"]))
            print("ok %s: %s" % (name, b["summary"]))
            ws.cleanup(keep_files=True)
    except Failure:
        ws.cleanup(keep_files=True)
        print("(kept in %s)" % ws.dir)
        raise
    ws.cleanup()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--part", choices=("dumps", "round-trip"), required=True)
    p.add_argument("--hangshim", required=True)
    p.add_argument("--shim")
    p.add_argument("--fakenccl")
    p.add_argument("--pythonpath", default="")
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--nccl-load", default="")
    args = p.parse_args()
    if args.part == "dumps":
        work = tempfile.mkdtemp(prefix="hangshim-fr-")
        try:
            part_dumps(args, work)
        except Failure as e:
            print("FAIL flight recorder dumps: %s\n(kept in %s)" % (e, work))
            return 1
        shutil.rmtree(work, ignore_errors=True)
        print("ok flight recorder dumps: hang shapes, versions 2.3/2.5/2.10, damaged dumps")
        return 0
    expect(args.shim and args.fakenccl, "--part round-trip needs --shim and --fakenccl")
    try:
        part_round_trip(args)
    except Failure as e:
        print("FAIL flight recorder round trip: %s" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
