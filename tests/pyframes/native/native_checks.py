"""Ground truth for the --native tests and the checks against it.

Truth comes from outside pyframes: the programs record their own Python stacks (stackrecord),
the kernel says where each blocked thread sits (/proc/PID/task/TID/syscall: the system call
and the user-space pc), gdb unwinds the same threads independently, and nm lists the
interpreter's symbols.
"""
import os
import re
import shutil
import subprocess

# System call numbers (x86-64) of the ways time.sleep blocks, and the libc functions that make
# them: select() (3.6-3.10; glibc makes it with pselect6), clock_nanosleep (3.11+).
SLEEP_CALLS = {23: ["select"], 270: ["select", "pselect"], 230: ["clock_nanosleep", "nanosleep"],
               35: ["nanosleep"]}
FUTEX = 202
EVAL_LOOP = re.compile(r"^_PyEval_EvalFrameDefault(\..*)?$")


def syscall_of(pid, tid):
    """(system call number, pc) of a thread blocked in a system call, or None."""
    try:
        with open("/proc/%d/task/%d/syscall" % (pid, tid)) as f:
            fields = f.read().split()
    except OSError:
        return None
    if len(fields) != 9 or not fields[0].isdigit():
        return None
    return int(fields[0]), int(fields[8], 16)


def native(frame):
    return frame.get("kind") == "native"


def python_only(frames):
    return [f for f in frames if f.get("kind") == "python"]


def describe(frame):
    if native(frame):
        return "[native] %s (%s+%#x) @%#x" % (frame.get("function") or "?", os.path.basename(frame.get("module", "")),
                                            frame.get("offset", 0), frame.get("address", 0))
    return "%s (%s:%s)" % (frame.get("function"), frame.get("file"), frame.get("line"))


def dump(frames, limit=60):
    return ["    #%d %s" % (i, describe(f)) for i, f in enumerate(frames[:limit])]


def merge_structure_problems(thread):
    """A merged stack keeps no evaluation-loop frame, and its Python runs sit where the loop's
    calls were: after an entry frame (every frame up to 3.10) comes C, after any other frame
    (3.11+: called from Python without a C call) comes Python."""
    problems = []
    frames = thread["frames"]
    for i, frame in enumerate(frames):
        if native(frame) and EVAL_LOOP.match(frame.get("function", "")):
            problems.append("frame #%d is an evaluation-loop frame left unmerged" % i)
        if not native(frame) and i + 1 < len(frames):
            follows_native = native(frames[i + 1])
            if frame.get("entry", False) != follows_native:
                problems.append("frame #%d %s (entry=%s) is followed by %s" % (
                    i, describe(frame), frame.get("entry", False), describe(frames[i + 1])))
    return problems


def innermost_problems(thread, syscall, libc_names):
    """The innermost frame is in libc at the kernel's pc, in the libc function called."""
    frames = thread["frames"]
    if not frames or not native(frames[0]):
        return ["the innermost frame is not native: %s" % (describe(frames[0]) if frames else "no frames")]
    problems = []
    first = frames[0]
    if syscall is not None and first.get("address") != syscall[1]:
        problems.append("innermost pc %#x, the kernel says %#x" % (first.get("address", 0), syscall[1]))
    if not os.path.basename(first.get("module", "")).startswith("libc.so"):
        problems.append("innermost frame not in libc: %s" % describe(first))
    # glibc 2.41 and later enter a cancellable system call through internal functions
    # (__syscall_cancel_arch, __internal_syscall_cancel) that a stripped libc does not name:
    # the innermost named frame is the function called, with only unnamed libc frames inside it.
    named = next((f for f in frames if not (native(f) and not f.get("function")
                                            and os.path.basename(f.get("module", "")).startswith("libc.so"))), first)
    if not native(named) or not any(name in named.get("function", "") for name in libc_names):
        problems.append("innermost named frame %s is none of %s" % (describe(named), ", ".join(libc_names)))
    return problems


# Run inside gdb: the physical frames of every thread. gdb also shows frames it reconstructs
# from debug information (inlined calls, and tail calls, which leave nothing on the stack);
# only NORMAL and SIGTRAMP frames are real stack frames.
GDB_SCRIPT = r"""
import gdb
for thread in gdb.selected_inferior().threads():
    thread.switch()
    print("THREAD %d" % thread.ptid[1])
    try:
        frame = gdb.newest_frame()
        while frame is not None:
            if frame.type() in (gdb.NORMAL_FRAME, gdb.SIGTRAMP_FRAME):
                print("FRAME %#x %s" % (frame.pc(), frame.name() or "??"))
            frame = frame.older()
    except gdb.error as error:
        print("STOPPED %s" % error)
"""


def gdb_stacks(target, workdir):
    """{tid: [(pc, function)]}, the physical frames gdb unwinds on a pid or a (python, core)
    pair; None when gdb is not installed."""
    gdb = shutil.which("gdb")
    if gdb is None:
        return None
    script = os.path.join(workdir, "frames.py")
    with open(script, "w") as f:
        f.write(GDB_SCRIPT)
    # No separate debug information either (python3.11-dbg installs Debian's interpreter's under
    # /usr/lib/debug): pyframes reads the files as shipped, so gdb must see them as shipped too,
    # whatever else the machine has installed.
    argv = [gdb, "-nx", "-batch", "-iex", "set auto-load off", "-iex", "set debuginfod enabled off",
            "-iex", "set debug-file-directory /nonexistent", "-iex", "set backtrace past-main on"]
    argv += ["-p", str(target)] if isinstance(target, int) else [target[0], target[1]]
    argv += ["-x", script]
    run = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         timeout=180)
    executable = os.readlink("/proc/%d/exe" % target) if isinstance(target, int) else target[0]
    parts = eval_loop_split_parts(executable)
    stacks, current = {}, None
    for line in run.stdout.decode("utf-8", "replace").splitlines():
        if line.startswith("THREAD "):
            current = stacks.setdefault(int(line.split()[1]), [])
        elif line.startswith("FRAME ") and current is not None:
            _, pc, function = line.split(" ", 2)
            pc = int(pc, 16)
            lookup = pc - 1 if current else pc  # a caller's pc is the return address
            if function in ("??", "") and any(start <= lookup < end for start, end in parts):
                function = "_PyEval_EvalFrameDefault.cold"
            current.append((pc, function))
    return stacks


def _binutils(argv):
    return subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          timeout=120).stdout.decode("utf-8", "replace")


def eval_loop_split_parts(executable):
    """[(start, end)]: the code GCC split off _PyEval_EvalFrameDefault ("_PyEval_EvalFrameDefault.cold")
    in a stripped, position-dependent executable (Debian's interpreters), which gdb cannot name.
    From binutils alone: nm for the function, objdump's decoded jumps out of it, and readelf's
    unwind ranges (FDEs) that two of them land in, one past the range's start (no compiler jumps
    into the middle of another function); readelf's -wN reads this file alone, never a debug file
    its debug link names (installed by python3.11-dbg, say). Empty for files with a symbol table (gdb names the
    parts from it) and for position-independent ones (their addresses would need the bias)."""
    headers = _binutils(["readelf", "-hS", executable])
    if "EXEC (Executable file)" not in headers or " .symtab " in headers:
        return []
    loop = re.search(r"^([0-9a-f]+) ([0-9a-f]+) T _PyEval_EvalFrameDefault$",
                     _binutils(["nm", "-DS", "--defined-only", executable]), re.M)
    if loop is None:
        return []
    start, size = int(loop.group(1), 16), int(loop.group(2), 16)
    code = _binutils(["objdump", "-d", "--no-show-raw-insn", "--start-address=%#x" % start,
                      "--stop-address=%#x" % (start + size), executable])
    targets = sorted(set(int(t, 16) for t in re.findall(r"\s(?:jmp|j[a-z]{1,3})\s+([0-9a-f]+)\b", code)))
    targets = [t for t in targets if not start <= t < start + size]
    ranges = [(int(a, 16), int(b, 16)) for a, b in re.findall(
        r" FDE cie=[0-9a-f]+ pc=([0-9a-f]+)\.\.([0-9a-f]+)", _binutils(["readelf", "-wN", "--debug-dump=frames", executable]))]
    parts = []
    for low, high in ranges:
        landed = [t for t in targets if low <= t < high]
        if low != start and len(landed) >= 2 and any(t != low for t in landed):
            parts.append((low, high))
    return parts


def gdb_problems(thread, gdb_frames):
    """Our native frames are gdb's, pc for pc, with gdb's evaluation-loop frames where ours
    were replaced by Python frames; names agree where gdb has one from the same symbols."""
    if gdb_frames is None:
        return []
    ours = [f for f in thread["frames"] if native(f)]
    theirs = [(pc, fn) for pc, fn in gdb_frames if not EVAL_LOOP.match(fn)]
    replaced = len(gdb_frames) - len(theirs)
    problems = []
    runs = len([f for f in python_only(thread["frames"]) if f.get("entry")])
    if thread["frames"] and not native(thread["frames"][-1]) and not thread["frames"][-1].get("entry"):
        runs += 1
    if replaced != runs:
        problems.append("gdb shows %d evaluation-loop frames, pyframes merged %d runs of Python frames" % (replaced, runs))
    if [f.get("address") for f in ours] != [pc for pc, _ in theirs]:
        problems.append("native pcs differ from gdb's:")
        width = max(len(ours), len(theirs))
        for i in range(width):
            a = describe(ours[i]) if i < len(ours) else "-"
            b = "%#x %s" % theirs[i] if i < len(theirs) else "-"
            problems.append("    #%d pyframes %s | gdb %s" % (i, a, b))
    return problems


def module_functions(module):
    """Function names of a module (its .symtab, else its separate debug file, and .dynsym),
    as nm lists them; empty when both are stripped."""
    names = set()
    candidates = [module]
    build_id = re.search(r"Build ID: ([0-9a-f]+)", subprocess.run(
        ["readelf", "-n", module], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode())
    if build_id:
        hexid = build_id.group(1)
        candidates.append("/usr/lib/debug/.build-id/%s/%s.debug" % (hexid[:2], hexid[2:]))
    for path, table in [(module, "-D")] + [(path, "") for path in candidates]:
        if not os.path.exists(path):
            continue
        argv = ["nm", "--defined-only"] + ([table] if table else []) + [path]
        out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        names.update(line.split()[-1].split("@")[0] for line in out.stdout.decode("utf-8", "replace").splitlines()
                     if len(line.split()) == 3 and line.split()[1] in "tTiW")
    return names


def text_problems(text, thread):
    """The text block of a thread lists the same frames as its JSON, innermost first, native
    ones as `[native] function (module+0xoffset)`."""
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith("Thread %d" % thread["native_id"])]
    if len(starts) != 1:
        return ["text: %d blocks for thread %d" % (len(starts), thread["native_id"])]
    got = []
    for line in lines[starts[0] + 1:]:
        if not line.startswith("    "):
            break
        if not line.startswith("        ") and not line.startswith("    ..."):
            got.append(line[4:])
    want = []
    for frame in thread["frames"]:
        if native(frame):
            where = "%s+%#x" % (os.path.basename(frame["module"]), frame["offset"]) if frame.get("module") else None
            if frame.get("function"):
                want.append("[native] %s (%s)" % (frame["function"], where) if where else "[native] " + frame["function"])
            else:
                want.append("[native] %s" % (where or "%#x" % frame["address"]))
        else:
            want.append("%s (%s:%d)" % (frame["function"], frame["file"], frame["line"]))
    if got != want:
        return ["text frames differ from the JSON frames:"] + ["    %r | %r" % (g, w) for g, w in zip(got + ["-"] * len(want), want + ["-"] * len(got))][:80]
    return []
