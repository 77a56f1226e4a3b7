#!/usr/bin/env python3
"""Core-file tests of pyframes against real interpreters.

    run_core_tests.py --probe BUILD/tests/pyframes/core/core_probe --python PYTHON --mode MODE [--program P]

Modes (one ctest each):
  gcore   dump the blocked PROGRAM with gcore; the core's stacks must equal the ground truth
          (threads whose stacks gcore says it could not read, and wrote as zeros, must be cut
          with that reason and named in a warning; then a kernel core must hold them whole)
  gzip    the same core gzip-compressed
  abort   the kernel's core of a program that calls os.abort() (RLIMIT_CORE raised for it;
          skipped with a message when core_pattern pipes cores to a handler)
  moved   the executable (and libpython) copied, run, dumped, then moved away: without
          --lib-search a clear error or warning, with it the same stacks as the ground truth
  memory  bytes read through the core (its segments, and the files for pages it left out)
          equal the live process's bytes, read from /proc/PID/mem before the dump
  bad     an empty file, a non-core ELF, the core of a non-Python program, truncated cores,
          a missing path: each a one-line error (or, for a core cut in its last segment, a
          warning saying how many bytes are missing)
Exit 0 passed, 1 failed, 77 skipped (with the reason on stdout). Every process started is
killed at the end, and the temporary directory removed.
"""
import argparse
import gzip
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from core_checks import compare_frames, compare_process, one_line_error, run_probe  # noqa: E402
from core_targets import (Skip, TargetError, Targets, find_kernel_core, gcore, gcore_with_output,  # noqa: E402
                          kernel_core_of, kernel_core_pattern, threads_in_ranges, zeroed_ranges)
from exec_wait import wait_exec_asleep  # noqa: E402  (tests/common: on the path since core_targets)

PROGRAMS = os.path.join(HERE, "programs")
SKIP = 77





def program_argv(python, program):
    return [python, program]


def check_stacks(run, target, fatal_prefix=None, argv=None):
    if run.returncode != 0:
        return [run.describe()]
    return compare_process(run.document(), target.truth, argv or target.argv, fatal_prefix)


ZEROED_REASON = "a frame's memory is all zeros"


def check_zeroed_threads(run, target, cut):
    """A gcore that wrote some threads' stacks as zeros (`cut`: their native ids): every other
    thread as recorded; each cut one truncated with the zeros reason after a prefix of its
    recorded frames, one warning naming exactly those threads, and (the output being
    incomplete) exit status 1 with one line saying how to get a whole core."""
    if run.returncode != 1 or not run.stdout:
        return ["expected exit 1 with the stacks read: %s" % run.describe()]
    problems = []
    lines = run.stderr.strip().splitlines()
    if len(lines) != 1 or ZEROED_REASON not in lines[0] or "let the kernel write the core" not in lines[0]:
        problems.append("stderr %r: expected one line with the zeros reason and the fix" % run.stderr)
    truth = dict(target.truth, threads=[t for t in target.truth["threads"] if t["native_id"] not in cut])
    document = run.document()
    whole = dict(document["process"], threads=[t for t in document["process"]["threads"] if t["native_id"] not in cut])
    problems += compare_process({"process": whole}, truth, target.argv, None)
    threads = {t["native_id"]: t for t in document["process"]["threads"]}
    for record in target.truth["threads"]:
        if record["native_id"] not in cut:
            continue
        label = "thread %s (stack written as zeros)" % record["label"]
        thread = threads.get(record["native_id"])
        if thread is None:
            problems.append("%s missing" % label)
            continue
        if not thread.get("truncated") or thread.get("truncation_reason") != ZEROED_REASON:
            problems.append("%s: truncated %s, reason %r, expected %r" % (
                label, thread.get("truncated"), thread.get("truncation_reason"), ZEROED_REASON))
        read = [f for f in thread["frames"] if f.get("kind", "python") == "python"]
        problems += compare_frames(label, read, record["frames"][:len(read)])
    zeroed = [w for w in document["process"]["warnings"] if "zeros in this core" in w]
    named = set(int(n) for n in re.findall(r"\d+", zeroed[0].split(" end in ")[0])) if len(zeroed) == 1 else set()
    if named != set(cut):
        problems.append("warnings %r: expected one naming threads %s" % (document["process"]["warnings"], sorted(cut)))
    return problems


def mode_gcore(args, targets, workdir, compress=False):
    # A launcher's RANK/LOCAL_RANK: read back from the environment block in the core's stack.
    target = targets.start(program_argv(args.python, args.program), workdir, env={"RANK": "3", "LOCAL_RANK": "1"},
                           dump_on_crash=True)
    target.wait_asleep()
    core, output = gcore_with_output(target.pid, os.path.join(workdir, "core"))
    # What gdb could not read it wrote as zeros (its own warnings say where): threads whose
    # stacks are there must be cut with that reason, and a kernel core must hold them whole.
    cut = threads_in_ranges(target.pid, [t["native_id"] for t in target.truth["threads"]],
                            zeroed_ranges(target.pid, output))
    kernel = kernel_core_of(target, workdir) if cut else None
    target.kill()
    if compress:
        with open(core, "rb") as raw, gzip.open(core + ".gz", "wb", compresslevel=1) as packed:
            shutil.copyfileobj(raw, packed, 1 << 20)
        os.unlink(core)
        core += ".gz"
    run = read_core(args, core)
    problems = check_zeroed_threads(run, target, cut) if cut else check_stacks(run, target)
    if not problems and (run.document()["process"]["rank"], run.document()["process"]["local_rank"]) != ("3", "1"):
        problems.append("RANK/LOCAL_RANK read as %r/%r, the program had 3/1" % (
            run.document()["process"]["rank"], run.document()["process"]["local_rank"]))
    if not problems and compress and not read_core(args, core, stacks=False).document()["gzip"]:
        problems.append("the core was not read as gzip")
    frames = sum(len(t["frames"]) for t in target.truth["threads"])
    detail = "%d threads, %d frames, core %d KiB, read in %.0f ms" % (
        len(target.truth["threads"]), frames, os.path.getsize(core) >> 10, run.seconds * 1000)
    if kernel:
        problems += check_stacks(read_core(args, kernel), target, fatal_prefix="SIGABRT")
        detail += "; gcore wrote the stacks of threads %s as zeros (its warnings), the kernel's core holds them" % (
            ", ".join(map(str, cut)))
        if not kernel.startswith(workdir):
            os.unlink(kernel)
    return problems, detail


def mode_abort(args, targets, workdir):
    pattern = kernel_core_pattern()
    started = time.time()
    target = targets.start(program_argv(args.python, args.program), workdir, env={"CORE_RECORD_ABORT": "1"},
                           dump_on_crash=True)
    target.process.wait(timeout=120)
    if target.process.returncode != -signal.SIGABRT:
        return ["expected death by SIGABRT, got status %s: %s" % (target.process.returncode, target.log())], ""
    target.wait_truth(timeout=1)
    core = find_kernel_core(pattern, workdir, target.pid, started)
    if core is None:
        raise Skip("the kernel wrote no core for pid %d (core_pattern %r, RLIMIT_CORE raised)" % (target.pid, pattern))
    try:
        run = read_core(args, core)
        problems = check_stacks(run, target, fatal_prefix="SIGABRT")
    finally:
        if not core.startswith(workdir):
            os.unlink(core)
    return problems, "kernel core %s, %d KiB" % (os.path.basename(core), os.path.getsize(core) >> 10) \
        if os.path.exists(core) else ""


def python_config(python):
    """sys.prefix, and the libpython the interpreter maps (None for a static interpreter)."""
    out = subprocess.check_output([python, "-c", "import sys; print(sys.prefix); print(([l.split()[-1] for l in "
                                   "open('/proc/self/maps') if '/libpython' in l] + [''])[0])"]).decode().split("\n")
    return out[0], out[1] or None


def mode_moved(args, targets, workdir):
    prefix, libpython = python_config(args.python)
    shared = libpython is not None
    soname = os.path.basename(libpython) if shared else None
    original = os.path.join(workdir, "cluster-node")
    os.mkdir(original)
    exe = os.path.join(original, os.path.basename(os.path.realpath(args.python)))
    shutil.copy2(os.path.realpath(args.python), exe)
    env = {"PYTHONHOME": prefix}
    if shared:
        shutil.copy2(libpython, os.path.join(original, soname))
        env["LD_LIBRARY_PATH"] = original
    target = targets.start([exe, args.program], workdir, env=env)
    target.wait_asleep()
    with open("/proc/%d/maps" % target.pid) as f:
        maps = f.read()
    if exe not in maps or (shared and os.path.join(original, soname) not in maps):
        return ["the copied interpreter did not run from %s:\n%s" % (original, maps)], ""
    core = gcore(target.pid, os.path.join(workdir, "core"))
    target.kill()
    relocated = os.path.join(workdir, "copied-here")
    os.rename(original, relocated)

    problems = []
    lost = read_core(args, core)
    moved_names = [os.path.basename(exe)] + ([soname] if shared else [])
    if lost.returncode == 0:
        warnings = " ".join(lost.document()["process"]["warnings"])
        if not any(name in warnings for name in moved_names) or "--lib-search" not in warnings:
            problems.append("files moved away, yet no warning names them: %r" % warnings)
    else:
        problems += one_line_error(lost, "--lib-search")
    found = read_core(args, core, ["--lib-search", relocated])
    problems += check_stacks(found, target)
    if found.returncode == 0:
        warnings = found.document()["process"]["warnings"]
        if any(original in w for w in warnings):
            problems.append("--lib-search %s did not find the files: %s" % (relocated, warnings))
    # --exe names the program itself; a shared libpython still needs --lib-search.
    exe_args = ["--exe", os.path.join(relocated, os.path.basename(exe))] + (["--lib-search", relocated] if shared else [])
    problems += check_stacks(read_core(args, core, exe_args), target)
    # A container's view: the files under a root directory at their original paths (--root).
    root = os.path.join(workdir, "container-root")
    shutil.copytree(relocated, root + original)
    rooted = read_core(args, core, ["--root", root])
    problems += check_stacks(rooted, target)
    return problems, "%s moved to %s, and found there and under --root" % (", ".join(moved_names), relocated)


def segments_end(path):
    """The end of the furthest segment data (PT_LOAD or PT_NOTE) in an ELF core, and the size
    of the PT_LOAD whose data comes last."""
    with open(path, "rb") as f:
        header = f.read(64)
        phoff, = struct.unpack_from("<Q", header, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", header, 0x36)
        f.seek(phoff)
        table = f.read(phentsize * phnum)
    end, loads = 0, []
    for i in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", table, i * phentsize)
        if p_type in (1, 4) and p_filesz:
            end = max(end, p_offset + p_filesz)
        if p_type == 1 and p_filesz:
            loads.append((p_offset + p_filesz, p_filesz))
    return end, max(loads)[1]


def truncated_copy(core, path, size):
    with open(core, "rb") as src, open(path, "wb") as dst:
        dst.write(src.read(size))
    return path


def not_dumped(pid):
    """Start addresses of the mappings no core holds (MADV_DONTDUMP: "dd" in smaps' VmFlags),
    such as the getrandom() state glibc 2.41 keeps per thread."""
    starts, start = set(), None
    with open("/proc/%d/smaps" % pid) as smaps:
        for line in smaps:
            if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                start = int(line.split("-")[0], 16)
            elif line.startswith("VmFlags:") and " dd" in line:
                starts.add(start)
    return starts


def live_samples(pid, size=64):
    """(address, bytes) from the start, middle and end of every readable mapping of `pid` that a
    core holds."""
    samples = []
    excluded = not_dumped(pid)
    with open("/proc/%d/maps" % pid) as maps, open("/proc/%d/mem" % pid, "rb", buffering=0) as mem:
        for line in maps:
            fields = line.split()
            name = fields[5] if len(fields) > 5 else ""
            if fields[1][0] != "r" or name in ("[vvar]", "[vsyscall]"):
                continue
            if int(fields[0].split("-")[0], 16) in excluded:
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            for address in sorted({start, start + ((end - start) // 2 & ~7), end - size}):
                try:
                    mem.seek(address)
                    samples.append((address, mem.read(size), name))
                except OSError:
                    pass
    return samples


def read_core(args, core, extra=(), stacks=True):
    """Stacks through the pyframes command when the test was given it, else through the probe."""
    return run_probe(args.probe, core, extra, stacks, pyframes=args.pyframes)


def mode_memory(args, targets, workdir):
    target = targets.start(program_argv(args.python, args.program), workdir)
    target.wait_asleep()
    samples = live_samples(target.pid)
    core = gcore(target.pid, os.path.join(workdir, "core"))
    target.kill()
    extra = []
    for address, data, _ in samples:
        extra += ["--read", "%#x:%d" % (address, len(data))]
    run = read_core(args, core, extra, stacks=False)
    if run.returncode != 0:
        return [run.describe()], ""
    reads = run.document()["reads"]
    problems = []
    for (address, data, name), got in zip(samples, reads):
        if got != data.hex():
            problems.append("%#x (%s): core gives %s, the process had %s" % (address, name or "anonymous", got[:32],
                                                                            data.hex()[:32]))
    in_files = [name for _, _, name in samples if name.startswith("/")]
    return problems, "%d samples, %d of them in %d mapped files" % (len(samples), len(in_files), len(set(in_files)))


def mode_bad(args, targets, workdir):
    problems = []
    empty = os.path.join(workdir, "empty.core")
    open(empty, "wb").close()
    problems += one_line_error(read_core(args, empty), "is empty")
    problems += one_line_error(read_core(args, os.path.realpath(args.python)), "not a core file")
    problems += one_line_error(read_core(args, os.path.join(workdir, "no-such-core")), "does not exist")

    sleeper = targets.spawn(["sleep", "1000"])
    wait_exec_asleep(sleeper.pid, "sleep")
    not_python = gcore(sleeper.pid, os.path.join(workdir, "sleep-core"))
    problems += one_line_error(read_core(args, not_python), "no Python interpreter", "sleep")

    # gdb writes its notes after the segments: a gcore dump cut anywhere has lost them.
    target = targets.start(program_argv(args.python, os.path.join(PROGRAMS, "case_threads.py")), workdir)
    target.wait_asleep()
    core = gcore(target.pid, os.path.join(workdir, "core"))
    target.kill()
    end, _ = segments_end(core)
    cut = truncated_copy(core, os.path.join(workdir, "cut-gcore.core"), end - 1000)
    problems += one_line_error(read_core(args, cut), "is truncated", "1000 bytes missing", "notes")

    # The kernel writes its notes first: a kernel core cut in its last segment still has the
    # Python state, and a warning gives the exact number of missing bytes.
    try:
        pattern = kernel_core_pattern()
    except Skip as skip:
        print("note: kernel-core truncation not checked: %s" % skip)
        return problems, "kernel cores unavailable"
    started = time.time()
    target = targets.start(program_argv(args.python, os.path.join(PROGRAMS, "case_abort.py")), workdir,
                           env={"CORE_RECORD_ABORT": "1"}, dump_on_crash=True)
    target.process.wait(timeout=120)
    target.wait_truth(timeout=1)
    core = find_kernel_core(pattern, workdir, target.pid, started)
    if core is None:
        print("note: kernel-core truncation not checked: no core written (core_pattern %r)" % pattern)
        return problems, "no kernel core"
    end, last = segments_end(core)
    cut = min(last, 4096)
    run = read_core(args, truncated_copy(core, os.path.join(workdir, "cut-last.core"), end - cut))
    missing = "%d bytes missing" % cut
    if run.returncode == 0:
        warnings = run.document()["process"]["warnings"]
        if not any(missing in w for w in warnings):
            problems.append("kernel core cut by %s: no warning saying so: %r" % (missing, warnings))
        problems += check_stacks(run, target, fatal_prefix="SIGABRT")
    else:
        problems += one_line_error(run, "truncated", missing)
    # Cut to a fifth: most of the memory is gone; an error (or a warning) counts the bytes.
    size = os.path.getsize(core) // 5
    run = read_core(args, truncated_copy(core, os.path.join(workdir, "cut-most.core"), size))
    missing = "%d bytes missing" % (end - size)
    if run.returncode == 0:
        if not any(missing in w for w in run.document()["process"]["warnings"]):
            problems.append("core cut to %d bytes: no warning saying %s" % (size, missing))
    else:
        problems += one_line_error(run, "truncated", missing)
    if not core.startswith(workdir):
        os.unlink(core)
    return problems, ""


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--probe", required=True)
    parser.add_argument("--pyframes", help="the pyframes command; stacks are read through it when given")
    parser.add_argument("--python", required=True)
    parser.add_argument("--mode", required=True, choices=["gcore", "gzip", "abort", "moved", "memory", "bad"])
    parser.add_argument("--program", help="a program speaking the ground-truth protocol of programs/core_record.py")
    args = parser.parse_args()
    if args.program is None:
        args.program = os.path.join(PROGRAMS, "case_abort.py" if args.mode == "abort" else "case_nested.py")
    args.program = os.path.abspath(args.program)
    args.probe = os.path.abspath(args.probe)
    if args.pyframes:
        args.pyframes = os.path.abspath(args.pyframes)
    workdir = tempfile.mkdtemp(prefix="pyframes-core-")
    name = "%s %s %s" % (args.mode, os.path.basename(args.program), args.python)
    try:
        with Targets() as targets:
            if args.mode in ("gcore", "gzip"):
                problems, detail = mode_gcore(args, targets, workdir, compress=args.mode == "gzip")
            else:
                problems, detail = {"abort": mode_abort, "moved": mode_moved, "memory": mode_memory,
                                   "bad": mode_bad}[args.mode](
                    args, targets, workdir)
    except Skip as skip:
        print("SKIP %s: %s" % (name, skip))
        return SKIP
    except (TargetError, subprocess.SubprocessError, OSError) as error:
        problems, detail = ["%s: %s" % (type(error).__name__, error)], ""
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if problems:
        print("FAIL %s" % name)
        for problem in problems[:60]:
            print("     %s" % problem)
        return 1
    print("ok   %s%s" % (name, " (%s)" % detail if detail else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
