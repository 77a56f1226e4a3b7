"""gdb extension tests that do not depend on the interpreter version:

  ledger   `pyframes ledger` on a live rank of a hung job run with libhangshim.so (tests/system/scenarios,
           the NCCL stand-in), on a gcore'd core holding the ledger's pages (coredump_filter bit 3)
           and on one without them (the file on disk is read instead, with a note; gone: an error);
           compared with `hangshim ledger` on the file at the same moment
  errors   no target, not a Python process, pyframes not found, bad arguments: one line each;
           help texts
  install  `cmake --install` into a prefix: the installed loader finds bin/pyframes relative to
           itself, also after the prefix moved; HANGSHIM_GDB_SYSTEM_INIT_DIR's init file loads it
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "pyframes", "live"))
sys.path.insert(0, os.path.join(HERE, "..", "pyframes", "core"))

from core_targets import Skip, gcore  # noqa: E402
from exec_wait import wait_exec_asleep  # noqa: E402  (tests/common: on the path since core_targets)
from itest_targets import Targets, TargetError  # noqa: E402

import gdb_session as gs  # noqa: E402
import stack_checks as sc  # noqa: E402

PROGRAMS = os.path.normpath(os.path.join(HERE, "..", "pyframes", "live", "programs"))
SCENARIOS = os.path.normpath(os.path.join(HERE, "..", "system", "scenarios"))
SOURCE_DIR = os.path.normpath(os.path.join(HERE, "..", ".."))
SOURCE_LOADER = os.path.join(SOURCE_DIR, "gdb", "pyframes-gdb.py")


class Problems(list):
    def expect(self, ok, message):
        if not ok:
            self.append(message)


# ---- ledger ---------------------------------------------------------------------------------

def start_hung_job(args, workdir):
    """Two ranks of barrier_skipped.py with the shim; returns ({rank: pid}, ledger dir) once hung."""
    ledgers = os.path.join(workdir, "ledgers")
    os.mkdir(ledgers, 0o700)
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = args.fakenccl + os.pathsep + env.get("LD_LIBRARY_PATH", "")
    env["HANGSHIM_DIR"] = ledgers
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LD_PRELOAD"):
        env.pop(name, None)
    status_path = os.path.join(workdir, "status.json")
    command = [args.python, os.path.join(SCENARIOS, "launch.py"), "-n", "2", "--timeout", "60", "--hang-after", "3",
               "--keep-hung", "--quiet", "--status", status_path, "--workdir", os.path.join(workdir, "job"),
               "--env", "HANGSHIM_STALL_SECONDS=1", "--env", "LD_PRELOAD=" + args.shim,
               "--", args.python, os.path.join(SCENARIOS, "barrier_skipped.py")]
    done = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=120)
    pids = {}
    if os.path.exists(status_path):
        with open(status_path) as f:
            status = json.load(f)
        pids = dict((r["rank"], r["pid"]) for r in status["ranks"] if r["running"])
    if done.returncode != 3 or len(pids) != 2:
        kill_ranks(pids)
        raise TargetError("the hung job did not start as expected (status %d): %s" % (
            done.returncode, done.stdout.decode("utf-8", "replace")[-2000:]))
    return pids, ledgers


def kill_ranks(pids):
    for pid in pids.values():
        try:
            os.killpg(pid, signal.SIGKILL)  # launch.py starts each rank in its own process group
        except OSError:
            pass


def ledger_file(ledgers, pid):
    found = [n for n in os.listdir(ledgers) if n.endswith("-%d.ledger" % pid)]
    return os.path.join(ledgers, found[0]) if found else None


def check_ledger_output(p, results, truth_index, what, read_from):
    """results[truth_index - 1] is `pyframes ledger --json`, results[truth_index] the truth:
    the same document, plus where the extension read it from."""
    mine, truth = results[truth_index - 1], results[truth_index]
    p.expect(truth["error"] is None, "%s: hangshim ledger on the file failed: %s" % (what, truth["error"]))
    p.expect(mine["error"] is None, "%s: pyframes ledger --json failed: %s" % (what, mine["error"]))
    if mine["error"] is not None or truth["error"] is not None:
        return None
    try:
        got, want = json.loads(mine["output"]), json.loads(truth["output"])
    except ValueError as error:
        p.append("%s: not JSON (%s): %r / %r" % (what, error, mine["output"][:300], truth["output"][:300]))
        return None
    p.expect(got.pop("read_from", None) == read_from, "%s: read_from %r, expected %r" % (
        what, mine["output"][-400:], read_from))
    notes = got.pop("notes", None)
    got.pop("saved_to", None)
    p.expect(got == want, "%s: the ledger read through gdb differs from the file's:\n%s\n---\n%s" % (
        what, mine["output"][:1500], truth["output"][:1500]))
    return notes


def ledger_group(args):
    p = Problems()
    workdir = tempfile.mkdtemp(prefix="gdb-ledger-")
    pids = {}
    try:
        pids, ledgers = start_hung_job(args, workdir)
        pid = pids[1]
        path = ledger_file(ledgers, pid)
        p.expect(path is not None, "rank 1 (pid %d) wrote no ledger in %s" % (pid, ledgers))
        if path is None:
            return p
        saved = os.path.join(workdir, "saved.ledger")
        truth = ["run", args.hangshim, "ledger", "--json", path]
        results = gs.session(args.loader, ["-p", str(pid)], [
            "pyframes ledger --json", truth, "pyframes ledger", "pyframes ledger --save %s" % saved,
            ["run", "cmp", saved, path], "pyframes ledger --bogus", "pyframes ledger --records"], workdir)
        notes = check_ledger_output(p, results, 1, "live", "the memory of process %d" % pid)
        p.expect(notes == [], "live: notes %r" % notes)
        text = results[2]["output"].split("\n")
        p.expect(text[0] == "Ledger %s (read from the memory of process %d)" % (path, pid),
                 "live: text header %r" % text[0])
        p.expect(any(line.startswith("process  pid %d " % pid) for line in text),
                 "live: the text lacks hangshim ledger's process line: %s" % text[:4])
        p.expect(any(line.startswith("ledger   %s " % path) for line in text),
                 "live: the text does not name the ledger (but a private copy?): %s" % text[:3])
        p.expect("barrier" in results[2]["output"], "live: the pending barrier is not in the text")
        p.expect(os.path.exists(saved) and os.stat(saved).st_mode & 0o777 == 0o600,
                 "live: --save wrote no 0600 file")
        p.expect(results[4]["error"] is None, "live: the saved ledger differs from the file: %s" % results[4]["error"])
        p += sc.check_error(results[5], ["unknown argument '--bogus'"], "ledger --bogus")
        p += sc.check_error(results[6], ["--records needs a value"], "ledger --records")

        # Cores: the rank is stopped first, so the file stays as the core has it.
        os.kill(pid, signal.SIGSTOP)
        with open("/proc/%d/coredump_filter" % pid) as f:
            default_filter = int(f.read().strip(), 16)
        with_pages = dump_with_filter(pid, default_filter | 0x8, os.path.join(workdir, "with"))
        without_pages = dump_with_filter(pid, default_filter & ~0x8, os.path.join(workdir, "without"))
        exe = os.path.realpath(args.python)
        results = gs.session(args.loader, [exe, with_pages], ["pyframes ledger --json", truth], workdir)
        notes = check_ledger_output(p, results, 1, "core with the ledger's pages", "the memory of core %s" % with_pages)
        p.expect(notes == [], "core with pages: notes %r" % notes)
        results = gs.session(args.loader, [exe, without_pages], ["pyframes ledger --json", truth, "pyframes ledger"],
                             workdir)
        notes = check_ledger_output(p, results, 1, "core without the ledger's pages", "the file %s" % path)
        p.expect(notes and "the core does not hold the ledger's pages" in notes[0], "core without pages: notes %r" % notes)
        p.expect(results[2]["output"].startswith(
            "Ledger %s (read from the file %s)\nnote: the core does not hold the ledger's pages" % (path, path)),
            "core without pages: text %r" % results[2]["output"][:300])
        os.rename(path, path + ".moved")
        results = gs.session(args.loader, [exe, without_pages], ["pyframes ledger"], workdir)
        p += sc.check_error(results[0], ["does not hold the pages", "no longer exists", "coredump_filter"],
                            "core without pages, file gone")
        env = gs.clean_env({"HANGSHIM_CLI": os.path.join(workdir, "no-such-hangshim")})
        results = gs.session(args.loader, [exe, with_pages], ["pyframes ledger"], workdir, env=env)
        p += sc.check_error(results[0], ["HANGSHIM_CLI"], "ledger, hangshim missing")
    except (TargetError, gs.GdbFailure) as error:
        p.append(str(error))
    finally:
        kill_ranks(pids)
        shutil.rmtree(workdir, ignore_errors=True)
    return p


def dump_with_filter(pid, coredump_filter, prefix):
    with open("/proc/%d/coredump_filter" % pid, "w") as f:
        f.write("%#x" % coredump_filter)
    return gcore(pid, prefix)


# ---- errors ---------------------------------------------------------------------------------

def one_line_error(p, result, words, what):
    code, _out, err = result
    lines = [line for line in err.split("\n") if line.strip()]
    p.expect(code != 0, "%s: gdb exited 0" % what)
    p.expect(len(lines) == 1, "%s: %d lines on stderr: %r" % (what, len(lines), err[-1000:]))
    missing = [w for w in words if w not in err]
    p.expect(not missing, "%s: stderr %r lacks %s" % (what, err.strip(), missing))


def errors_group(args):
    p = Problems()
    workdir = tempfile.mkdtemp(prefix="gdb-errors-")
    try:
        with Targets(args.python, PROGRAMS, workdir) as targets:
            one_line_error(p, gs.run_batch(args.loader, [], ["pyframes bt"]), ["gdb has no process or core file"],
                           "no target")
            sleeper = targets.spawn(["sleep", "1000"])
            wait_exec_asleep(sleeper.pid, "sleep")
            one_line_error(p, gs.run_batch(args.loader, ["-p", str(sleeper.pid)], ["pyframes bt"]),
                           ["process %d" % sleeper.pid, "not a CPython process"], "not Python")
            target = targets.start("case_methods.py")
            target.wait_ready()
            live = ["-p", str(target.pid)]
            missing = os.path.join(workdir, "no-such-pyframes")
            one_line_error(p, gs.run_batch(args.loader, live, ["pyframes bt"], env=gs.clean_env({"PYFRAMES": missing})),
                           ["pyframes executable was not found", missing, "PYFRAMES="], "PYFRAMES missing")
            path_without = gs.clean_env({"PATH": "/usr/bin:/bin"})
            one_line_error(p, gs.run_batch(SOURCE_LOADER, live, ["pyframes bt"], env=path_without),
                           ["pyframes executable was not found", "set PYFRAMES="], "pyframes nowhere")
            one_line_error(p, gs.run_batch(args.loader, live, ["pyframes ledger"]),
                           ["has no hangshim ledger mapped", "LD_PRELOAD=libhangshim.so"], "no ledger")
            one_line_error(p, gs.run_batch(args.loader, live, ["pyframes bt --bogus"]), ["unknown argument '--bogus'"],
                           "bt --bogus")
            one_line_error(p, gs.run_batch(args.loader, live, ["pyframes nonsense"]), ["unknown subcommand"],
                           "unknown subcommand")
            code, out, err = gs.run_batch(args.loader, [], ["pyframes"] + ["help pyframes %s" % c for c in (
                "bt", "list", "up", "down", "frame", "locals", "print", "ledger")])
            p.expect(code == 0 and not err.strip(), "help: status %d, stderr %r" % (code, err))
            for word in ("pyframes bt", "Usage: pyframes list", "Usage: pyframes up", "Usage: pyframes down",
                         "Usage: pyframes frame", "Usage: pyframes locals", "Usage: pyframes print NAME",
                         "Usage: pyframes ledger"):
                p.expect(word in out, "help: %r missing" % word)
            # libpython.py's commands, defined by the extension where libpython.py is not loaded;
            # where something defined py-bt first (libpython.py), it stays.
            code, out, err = gs.run_batch(args.loader, [], ["help %s" % c for c in (
                "py-bt", "py-bt-full", "py-list", "py-up", "py-down", "py-locals", "py-print")])
            p.expect(code == 0 and not err.strip(), "help py-*: status %d, stderr %r" % (code, err))
            for word in ("libpython.py's py-bt", "libpython.py's py-bt-full", "py-list START,END", "libpython.py's py-up",
                         "libpython.py's py-down", "libpython.py's py-locals", "libpython.py's py-print"):
                p.expect(word in out, "help py-*: %r missing" % word)
            theirs = os.path.join(workdir, "theirs-gdb.py")
            with open(theirs, "w") as f:
                f.write("import gdb\nclass Theirs(gdb.Command):\n    def invoke(self, argument, from_tty):\n"
                        "        gdb.write('theirs\\n')\nTheirs('py-bt', gdb.COMMAND_STACK)\n")
            code, out, err = gs.run_batch(None, ["-iex", "source %s" % theirs, "-iex", "source %s" % args.loader],
                                          ["py-bt"])
            p.expect(out.strip() == "theirs", "py-bt defined before the extension: %r %r" % (out, err))
            # A pyframes that may not read processes (as under ptrace_scope=1, where gdb may trace
            # its child but pyframes may not): the extension reads a core gdb writes instead.
            truth = target.truth
            wrapper = os.path.join(workdir, "pyframes-not-allowed")
            with open(wrapper, "w") as f:
                f.write('#!/bin/sh\n# reads PIDs as nobody, cores as the caller\nfor a; do last=$a; done\n'
                        'case $last in *[!0-9]*) exec "%s" "$@";; esac\n'
                        'exec setpriv --reuid=nobody --regid=nogroup --clear-groups -- "%s" "$@"\n'
                        % (args.pyframes, args.pyframes))
            os.chmod(wrapper, 0o755)
            private_tmp = os.path.join(workdir, "tmp")
            os.mkdir(private_tmp)
            results = gs.session(args.loader, live, ["pyframes bt", "pyframes up", "pyframes locals"], workdir,
                                 env=gs.clean_env({"PYFRAMES": wrapper, "TMPDIR": private_tmp}))
            output = results[0]["output"]
            p.expect(output.startswith("note: pyframes may not read process %d itself (" % target.pid) and
                     "Permission denied" in output and "read from a core gdb wrote of it" in output,
                     "permission denied: no note: %r %r" % (output[:400], results[0]["error"]))
            p.extend(sc.check_bt(output, truth["threads"][0], "permission denied, through a core"))
            p.extend(sc.check_shown_frame(results[1], truth["threads"][0], 1, "permission denied: up"))
            p.expect(results[2]["error"] is None, "permission denied: locals: %s" % results[2]["error"])
            p.expect(os.listdir(private_tmp) == [], "left in $TMPDIR: %s" % os.listdir(private_tmp))
            # Source-tree loader with PYFRAMES set: the same stacks as the build's loader.
            env = gs.clean_env({"PYFRAMES": args.pyframes})
            code, out, err = gs.run_batch(SOURCE_LOADER, live, ["pyframes bt"], env=env)
            p.expect(code == 0 and "#0  hold (" in out, "source-tree loader with PYFRAMES: %d %r %r" % (code, out, err))
    except (TargetError, gs.GdbFailure) as error:
        p.append(str(error))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return p


# ---- install --------------------------------------------------------------------------------

def install_group(args):
    p = Problems()
    workdir = tempfile.mkdtemp(prefix="gdb-install-")
    try:
        prefix = os.path.join(workdir, "prefix")
        done = subprocess.run(["cmake", "--install", args.build, "--prefix", prefix], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=120)
        p.expect(done.returncode == 0, "cmake --install failed: %s" % done.stdout.decode("utf-8", "replace")[-2000:])
        moved = os.path.join(workdir, "moved")
        with Targets(args.python, PROGRAMS, workdir) as targets:
            target = targets.start("case_methods.py")
            truth = target.wait_ready()
            for root in (prefix, moved):
                if root == moved:
                    os.rename(prefix, moved)
                loader = os.path.join(root, "share", "hangshim", "gdb", "pyframes-gdb.py")
                env = gs.clean_env({"PATH": "/usr/bin:/bin"})
                results = gs.session(loader, ["-p", str(target.pid)], [
                    "python print(__import__('hangshim_gdb').tools.PYFRAMES.path())", "pyframes bt"], workdir, env=env)
                p.expect(results[0]["output"].strip() == os.path.join(root, "bin", "pyframes"),
                         "installed in %s: the loader runs %r" % (root, results[0]["output"] or results[0]["error"]))
                p.extend(sc.check_bt(results[1]["output"], truth["threads"][0], "installed in %s" % root))
            # HANGSHIM_GDB_SYSTEM_INIT_DIR: a gdb init file that loads the installed extension
            # (component gdb: the extension alone, nothing to build).
            init_dir = os.path.join(workdir, "gdbinit.d")
            configured = os.path.join(workdir, "configured")
            only_gdb = os.path.join(workdir, "only-gdb")
            for command in (["cmake", "-S", SOURCE_DIR, "-B", configured, "-DHANGSHIM_BUILD_TESTS=OFF",
                             "-DHANGSHIM_GDB_SYSTEM_INIT_DIR=" + init_dir],
                            ["cmake", "--install", configured, "--component", "gdb", "--prefix", only_gdb]):
                done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
                p.expect(done.returncode == 0, "%s failed: %s" % (" ".join(command), done.stdout.decode()[-2000:]))
            init_file = os.path.join(init_dir, "hangshim-pyframes.gdb")
            p.expect(os.path.isfile(init_file), "no %s" % init_file)
            if os.path.isfile(init_file):
                results = gs.session(None, ["-x", init_file, "-p", str(target.pid)], ["pyframes bt"], workdir,
                                     env=gs.clean_env({"PYFRAMES": args.pyframes}))
                p.extend(sc.check_bt(results[0]["output"], truth["threads"][0], "loaded by %s" % init_file))
    except (TargetError, gs.GdbFailure) as error:
        p.append(str(error))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return p


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--group", choices=("ledger", "errors", "install"), required=True)
    parser.add_argument("--python", required=True)
    parser.add_argument("--loader", required=True)
    parser.add_argument("--pyframes")
    parser.add_argument("--hangshim")
    parser.add_argument("--shim")
    parser.add_argument("--fakenccl")
    parser.add_argument("--build")
    args = parser.parse_args()
    try:
        problems = {"ledger": ledger_group, "errors": errors_group, "install": install_group}[args.group](args)
    except Skip as skip:
        print("SKIP %s" % skip)
        return 77
    for problem in problems:
        print("FAIL " + problem)
    if problems:
        return 1
    print("ok: gdb %s" % args.group)
    return 0


if __name__ == "__main__":
    sys.exit(main())
