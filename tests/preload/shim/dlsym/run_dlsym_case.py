"""libhangshim.so and programs that look NCCL up through their own handle (dlsym/dlvsym
interposer, preload/shim/dlsym_entry.cpp). Every expectation comes from the program itself: its
own printed calls, or its own answers without the shim.

    run_dlsym_case.py --case private --shim LIB --hangshim CLI --program EXE --nccl LIB
    run_dlsym_case.py --case two     --shim LIB --program EXE --nccl LIB_A --nccl LIB_B
    run_dlsym_case.py --case next    --shim LIB --program EXE --nccl LIB_B
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "common"))
from expect import Failure, expect  # noqa: E402


def run(command, env):
    p = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def environment(args, ledgers, shim):
    env = dict(os.environ)
    for k in ("LD_PRELOAD", "LD_LIBRARY_PATH", "RANK", "WORLD_SIZE", "LOCAL_RANK"):
        env.pop(k, None)
    env["HANGSHIM_DIR"] = ledgers
    if shim:
        env["LD_PRELOAD"] = args.shim
    return env


def addresses(text):
    """{name: file} from the program's 'address NAME FILE' lines."""
    return {f[1]: f[2] for f in (line.split() for line in text.splitlines()) if f and f[0] == "address"}


def case_private(args, tmp):
    """dlopen(RTLD_LOCAL) + dlsym(handle): the addresses are the shim's, the calls are recorded."""
    ledgers = os.path.join(tmp, "ledgers")
    os.mkdir(ledgers, 0o700)
    calls = 4
    code, plain, err = run([args.program, args.nccl[0], str(calls)], environment(args, ledgers, False))
    expect(code == 0, "the program fails without the shim: %s" % err)
    expect(set(addresses(plain).values()) == {os.path.basename(args.nccl[0])},
           "without the shim the addresses should be the library's: %s" % addresses(plain))
    expect(not glob.glob(os.path.join(ledgers, "*.ledger")), "a ledger without the shim")
    code, out, err = run([args.program, args.nccl[0], str(calls)], environment(args, ledgers, True))
    expect(code == 0, "the program fails with the shim: %s" % err)
    expect("hangshim" not in err, "the shim printed: %s" % err)
    got = addresses(out)
    expect(sorted(got) == sorted(addresses(plain)) and set(got.values()) == {os.path.basename(args.shim)},
           "with the shim every NCCL address should be libhangshim.so's: %s" % got)
    program_calls = [line.split()[1:] for line in out.splitlines() if line.startswith("call ")]
    expect(len(program_calls) == 2 * calls, "the program printed %d calls" % len(program_calls))
    files = glob.glob(os.path.join(ledgers, "*.ledger"))
    expect(len(files) == 1, "one ledger expected, found %s" % files)
    p = subprocess.run([args.hangshim, "ledger", "--json", files[0]], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    expect(p.returncode == 0, "hangshim ledger failed: %s" % p.stderr)
    ledger = json.loads(p.stdout)
    comms = ledger["communicators"]
    expect(len(comms) == 1 and comms[0]["rank"] == 0 and comms[0]["nranks"] == 1,
           "one communicator of one rank expected: %s" % comms)
    expect(comms[0]["state"] == "destroyed", "the communicator was destroyed: %s" % comms[0]["state"])
    recorded = [[r["nccl_op"], str(r["count"])] for r in ledger["records"] if r["nccl_op"] in ("all_reduce", "broadcast")]
    expect(recorded == program_calls, "the ledger's records %s differ from the program's calls %s" % (recorded, program_calls))
    seqs = [r["seq"] for r in ledger["records"] if r["nccl_op"] in ("all_reduce", "broadcast")]
    expect(seqs == list(range(1, len(program_calls) + 1)), "sequence numbers %s" % seqs)


def case_two(args, tmp):
    """Two NCCLs dlopen'ed privately: each handle's calls reach its own library."""
    ledgers = os.path.join(tmp, "ledgers")
    os.mkdir(ledgers, 0o700)
    command = [args.program] + args.nccl
    code, plain, err = run(command, environment(args, ledgers, False))
    expect(code == 0, "the program fails without the shim: %s" % err)
    versions = [line for line in plain.splitlines() if "ncclGetVersion" in line]
    expect(len(set(v.split(": ", 1)[1] for v in versions)) == 2,
           "the two libraries should answer differently without the shim: %s" % versions)
    code, shimmed, err_shim = run(command, environment(args, ledgers, True))
    expect(code == 0, "the program fails with the shim: %s" % err_shim)
    expect(shimmed == plain, "answers differ with the shim:\n%s\nwithout:\n%s" % (shimmed, plain))
    places = {line.split()[4] for line in err_shim.splitlines() if line.startswith("address ")} | \
             {line.split()[6] for line in err_shim.splitlines() if line.startswith("address ")}
    expect(places == {os.path.basename(args.shim)}, "with the shim the addresses should be libhangshim.so's: %s" % places)
    expect("hangshim:" not in err_shim, "the shim warned: %s" % err_shim)


def case_next(args, tmp):
    """Lookups of other names, RTLD_NEXT above all, answer as without the shim."""
    ledgers = os.path.join(tmp, "ledgers")
    os.mkdir(ledgers, 0o700)
    command = [args.program, args.nccl[0]]
    code, plain, err = run(command, environment(args, ledgers, False))
    expect(code == 0, "the program fails without the shim: %s" % err)
    code, shimmed, err = run(command, environment(args, ledgers, True))
    expect(code == 0, "the program fails with the shim: %s" % err)
    expect(shimmed == plain, "dlsym answers differ with the shim:\n%s\nwithout:\n%s" % (shimmed, plain))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--case", required=True, choices=("private", "two", "next"))
    p.add_argument("--shim", required=True)
    p.add_argument("--hangshim")
    p.add_argument("--program", required=True)
    p.add_argument("--nccl", action="append", default=[])
    args = p.parse_args()
    tmp = tempfile.mkdtemp(prefix="hangshim-dlsym-")
    try:
        {"private": case_private, "two": case_two, "next": case_next}[args.case](args, tmp)
    except Failure as e:
        print("FAIL dlsym/%s: %s" % (args.case, e))
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("ok dlsym/%s" % args.case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
