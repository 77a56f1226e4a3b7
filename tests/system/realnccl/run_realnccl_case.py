"""Runs one realnccl test case: programs against the real libnccl.so.2 with libhangshim.so
preloaded, then checks the ledgers and the report against what the programs printed (never
against strings written into this file).

    run_realnccl_case.py --case NAME --shim LIB --hangshim CLI --probe EXE --library LIBNCCL
                         --python PY --python-job init_fail.py

Cases:
  init_failure         2 ranks of realnccl_probe (a C program) under `hangshim run`, sharing a
                       unique id through a file; without a GPU both inits fail. The report's
                       verdict is init_failed with each rank's call, error name and NCCL text.
  init_failure_python  the same with a Python ctypes job (init_fail.py).
  bcast_one_record     ncclBcast with a NULL communicator: the real 2.28 ncclBcast calls
                       ncclBroadcast through its PLT, which lands in the shim's ncclBroadcast;
                       one program call must leave exactly one record.
  version              ncclGetVersion through the shim is the library's own code (nccl.h's
                       NCCL_VERSION_CODE), and the ledger's nccl line shows it.
Exit: 0 passed, 1 failed, 77 skipped (the case cannot be tested here, e.g. init succeeds on a GPU).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
from expect import Failure, expect  # noqa: E402

SKIP = 77


class Skip(Exception):
    pass


class Case(object):
    def __init__(self, args):
        self.args = args
        self.dir = tempfile.mkdtemp(prefix="hangshim-realnccl-")
        self.ledgers = os.path.join(self.dir, "ledgers")
        os.mkdir(self.ledgers, 0o700)

    def env(self, **extra):
        env = dict(os.environ)
        for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LD_PRELOAD", "HANGSHIM_DISABLE", "NCCL_DEBUG"):
            env.pop(k, None)
        # The real library's directory only: never the stand-in's.
        env["LD_LIBRARY_PATH"] = os.path.dirname(self.args.library)
        env["HANGSHIM_DIR"] = self.ledgers
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def preloaded(self, **extra):
        return self.env(LD_PRELOAD=self.args.shim, **extra)

    def hangshim(self, *argv):
        p = subprocess.run([self.args.hangshim] + list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=120)
        return p.returncode, p.stdout, p.stderr

    def ledger_files(self):
        return sorted(os.path.join(self.ledgers, f) for f in os.listdir(self.ledgers) if f.endswith(".ledger"))

    def ledger(self, path):
        code, out, err = self.hangshim("ledger", "--json", path)
        expect(code == 0, "hangshim ledger %s: exit %d: %s" % (path, code, err))
        return json.loads(out)

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)


INIT_LINE = re.compile(r"^init (\d+) (\w+) (-?\d+) (\w+)\|(.*)$")


def run_init_job(c, job_argv):
    """Starts 2 ranks of `job_argv(rank, nranks, idfile)` under `hangshim run`; returns what each
    printed: {rank: (call, code, name, text)}."""
    n = 2
    idfile = os.path.join(c.dir, "unique-id")
    procs = []
    for rank in range(n):
        argv = [c.args.hangshim, "run", "--quiet", "--shim", c.args.shim, "--dir", c.ledgers, "--"] + \
            job_argv(rank, n, idfile)
        procs.append(subprocess.Popen(argv, env=c.env(RANK=rank, WORLD_SIZE=n, LOCAL_RANK=rank),
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True))
    printed = {}
    for rank, p in enumerate(procs):
        try:
            out, err = p.communicate(timeout=180)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise Failure("rank %d did not finish within 180 s (a GPU machine where init waits?)" % rank)
        lines = [m.groups() for m in map(INIT_LINE.match, out.splitlines()) if m]
        expect(len(lines) == 1, "rank %d printed no init line (exit %d): %s %s" % (rank, p.returncode, out, err))
        r, call, code, name, text = lines[0]
        expect(int(r) == rank, "rank %d printed rank %s" % (rank, r))
        printed[rank] = (call, int(code), name, text)
        expect(p.returncode == (0 if int(code) == 0 else 3), "rank %d: exit %d after %s" % (rank, p.returncode, lines[0]))
    if all(code == 0 for _, code, _, _ in printed.values()):
        raise Skip("ncclCommInitRank succeeded on every rank here (a usable GPU): no init failure to test")
    return printed


def check_init_report(c, printed):
    failed = {rank: p for rank, p in printed.items() if p[1] != 0}
    code, out, err = c.hangshim("report", "--json", "--exit-status", "--no-stacks", c.ledgers)
    expect(code == 3, "report --exit-status: exit %d (expected 3: a problem): %s" % (code, err))
    doc = json.loads(out)
    verdict = doc["verdict"]
    expect(verdict["kind"] == "init_failed" and verdict["problem"], "verdict %s" % json.dumps(verdict))
    expect(verdict["culprits"] == sorted(failed), "culprits %s, the ranks whose init failed %s" %
           (verdict["culprits"], sorted(failed)))
    failures = doc["findings"][verdict["finding"]]["failures"]
    for rank, (call, result, name, text) in failed.items():
        group = [f for f in failures if rank in f["ranks"]]
        expect(len(group) == 1, "rank %d in %d failure groups: %s" % (rank, len(group), failures))
        f = group[0]
        expect((f["call"], f["result_code"], f["result"]) == (call, result, name),
               "rank %d: report says %s returned %s (%d); the program saw %s returning %s (%d)" %
               (rank, f["call"], f["result"], f["result_code"], call, name, result))
        expect(f["last_error"] == text[:200], "rank %d: ncclGetLastError in the report %r, the program printed %r" %
               (rank, f["last_error"], text))
    code, out, err = c.hangshim("report", "--exit-status", "--no-stacks", c.ledgers)
    expect(code == 3, "report (text) --exit-status: exit %d: %s" % (code, err))
    first = out.splitlines()[0] if out else ""
    for call, _, name, text in failed.values():
        for part in (call, name, text[:200]):
            expect(part in first, "the verdict line lacks %r:\n%s" % (part, out))
    expect("NCCL_DEBUG=INFO" in out, "no NCCL_DEBUG=INFO advice:\n%s" % out)
    for path in c.ledger_files():
        code, out, err = c.hangshim("ledger", path)
        expect(code == 0, "hangshim ledger %s: %s" % (path, err))
        for _, result, name, _ in failed.values():
            expect("error %d " % result not in out and ("error %s" % name) in out,
                   "ledger %s does not name the error %s:\n%s" % (path, name, out))
    print("verdict: " + first)


def case_init_failure(c):
    printed = run_init_job(c, lambda rank, n, idfile: [c.args.probe, "init", str(rank), str(n), idfile])
    check_init_report(c, printed)


def case_init_failure_python(c):
    printed = run_init_job(c, lambda rank, n, idfile: [c.args.python, c.args.python_job, str(rank), str(n), idfile])
    check_init_report(c, printed)


def case_init_all_failure(c):
    """ncclCommInitAll: one process sets up every device's communicator (no RANK variable). The
    real library fails it without a GPU; the report reads the one rank-less process as the job
    and gives the init_failed verdict naming ncclCommInitAll and NCCL's own words."""
    argv = [c.args.hangshim, "run", "--quiet", "--shim", c.args.shim, "--dir", c.ledgers, "--", c.args.probe, "init_all", "2"]
    p = subprocess.run(argv, env=c.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=180)
    lines = [m.groups() for m in map(INIT_LINE.match, p.stdout.splitlines()) if m]
    expect(len(lines) == 1, "no init line (exit %d): %s %s" % (p.returncode, p.stdout, p.stderr))
    rank, call, code, name, text = lines[0]
    if int(code) == 0:
        raise Skip("ncclCommInitAll succeeded here (usable GPUs): no init failure to test")
    expect(p.returncode == 3 and call == "ncclCommInitAll", "exit %d after %s" % (p.returncode, lines[0]))
    check_init_report(c, {0: (call, int(code), name, text)})


BCAST_LINE = re.compile(r"^bcast (-?\d+) (\w+)\|(.*)$")


def bcast_run(c, mode):
    p = subprocess.run([c.args.probe, mode], env=c.preloaded(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=120)
    expect(p.returncode == 0, "realnccl_probe %s: exit %d: %s" % (mode, p.returncode, p.stderr))
    files = c.ledger_files()
    expect(len(files) == 1, "one ledger expected, found %s (stderr: %s)" % (files, p.stderr))
    return p.stdout, c.ledger(files[0]), files[0]


def case_bcast_one_record(c):
    out, ledger, _ = bcast_run(c, "bcast")
    lines = [m.groups() for m in map(BCAST_LINE.match, out.splitlines()) if m]
    expect(len(lines) == 1, "the program's bcast line: %r" % out)
    code, name, text = int(lines[0][0]), lines[0][1], lines[0][2]
    records = ledger["records"]
    # The program made one NCCL call that records (ncclBcast); NCCL's own ncclBroadcast call from
    # inside it must not make a second record.
    expect(len(records) == 1, "one call, %d records: %s" % (len(records), [(r["nccl_op"], r["result"]) for r in records]))
    r = records[0]
    expect(r["nccl_op"] == "broadcast" and r["call"] == "ncclBcast" and r["result"] == code and r["result_name"] == name,
           "the record %s; the program's ncclBcast returned %s (%d)" % (r, name, code))
    if code != 0:
        e = ledger["first_error"]
        expect(e is not None and e["record"] == r["index"] and e["text"] == text[:200] and e["call"] == "ncclBcast",
               "first error %s; the program's ncclBcast, ncclGetLastError %r" % (e, text))
    print("one record: %s returned %s" % (r["nccl_op"], r["result_name"]))


def case_version(c):
    out, ledger, path = bcast_run(c, "version")
    m = re.search(r"^version (-?\d+) (\d+) (\d+)$", out, re.M)
    expect(m is not None, "the program's version line: %r" % out)
    result, runtime, header = (int(x) for x in m.groups())
    expect(result == 0 and runtime == header, "ncclGetVersion through the shim gave %d (result %d); nccl.h says %d" %
           (runtime, result, header))
    expect(ledger["process"]["nccl_version"] == runtime, "ledger nccl_version %s, the program's %d" %
           (ledger["process"]["nccl_version"], runtime))
    dotted = "%d.%d.%d" % (runtime // 10000, runtime // 100 % 100, runtime % 100)
    code, text, err = c.hangshim("ledger", path)
    line = [l for l in text.splitlines() if l.startswith("nccl ")]
    expect(len(line) == 1 and line[0].split()[1] == dotted, "ledger's nccl line %s, expected %s" % (line, dotted))
    print("nccl %s" % dotted)


CASES = {"init_failure": case_init_failure, "init_failure_python": case_init_failure_python,
         "init_all_failure": case_init_all_failure,
         "bcast_one_record": case_bcast_one_record, "version": case_version}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--case", required=True, choices=sorted(CASES))
    for option in ("--shim", "--hangshim", "--probe", "--library", "--python", "--python-job"):
        p.add_argument(option, required=True)
    args = p.parse_args()
    c = Case(args)
    try:
        CASES[args.case](c)
    except Skip as e:
        print("skipped: %s" % e)
        c.cleanup()
        return SKIP
    except Failure as e:
        print("FAIL %s: %s" % (args.case, e))
        print("(ledgers kept in %s)" % c.ledgers)
        return 1
    c.cleanup()
    print("ok %s" % args.case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
