"""Runs inside gdb (gdb -x capture.py): executes the commands listed in the JSON file named by
$GDB_CAPTURE_SESSION, each with gdb.execute(to_string=True), and writes what each printed and
the error it raised (gdb prints exactly that one line) to the "out" file of the session.
An entry ["run", ARGV...] instead runs a program while gdb holds the target stopped (the truth
to compare with, taken at the same moment); ["select-lwp", LWP] selects gdb's thread of that
Linux thread id (what `thread N` does, without knowing gdb's number N)."""
import json
import os
import subprocess

import gdb

with open(os.environ["GDB_CAPTURE_SESSION"]) as f:
    session = json.load(f)



def name_threads_printably():
    """Gives each live thread whose kernel name is not UTF-8 that name with the cut character
    replaced (U+FFFD, as the programs' own record of it reads it), as gdb's name for the thread:
    gdb then prints valid UTF-8 in its headers. Returns the threads renamed."""
    renamed = []
    inferior = gdb.selected_inferior()
    for thread in inferior.threads():
        lwp = thread.ptid[1]
        try:
            with open("/proc/%d/task/%d/comm" % (inferior.pid, lwp), "rb") as f:
                raw = f.read().rstrip(b"\n")
        except OSError:
            continue  # a core file, or the thread is gone: its name is what gdb has
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            thread.name = raw.decode("utf-8", "replace")
            renamed.append(thread)
    return renamed


def execute(command):
    """What `command` prints. gdb.execute(to_string=True) decodes gdb's output as UTF-8 and fails
    on anything else, which gdb's own text can hold: from 3.14 Python names OS threads after its
    threads, and the kernel cuts a name at 15 bytes, possibly inside a character; gdb's thread
    headers print it. Then the command runs again with gdb logging into a file, read as bytes."""
    try:
        return gdb.execute(command, to_string=True)
    except UnicodeDecodeError:
        pass
    renamed = name_threads_printably()
    try:
        return gdb.execute(command, to_string=True)
    except UnicodeDecodeError:
        pass
    finally:
        for thread in renamed:
            thread.name = None  # gdb's own name again (the kernel's)
    # Logging is the last resort: it loses what is printed before a nested to_string call.
    path = session["out"] + ".log"
    for setting in ("file %s" % path, "overwrite on", "redirect on", "enabled on"):
        gdb.execute("set logging %s" % setting, to_string=True)
    try:
        gdb.execute(command)
    finally:
        gdb.execute("set logging enabled off", to_string=True)
    with open(path, "rb") as f:
        return f.read().decode("utf-8", "replace")


results = []
for command in session["commands"]:
    if isinstance(command, list) and command[0] == "run":
        done = subprocess.run(command[1:], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        results.append({"command": command, "output": done.stdout.decode("utf-8", "replace"),
                        "error": done.stderr.decode("utf-8", "replace") if done.returncode else None})
        continue
    if isinstance(command, list) and command[0] == "select-lwp":
        found = [t for t in gdb.selected_inferior().threads() if t.ptid[1] == command[1]]
        if found:
            found[0].switch()
        results.append({"command": command, "output": "", "error": None if found else "no such LWP"})
        continue
    try:
        output = execute(command)
        results.append({"command": command, "output": output, "error": None})
    except gdb.error as error:
        results.append({"command": command, "output": "", "error": str(error)})

with open(session["out"] + ".tmp", "w") as f:
    json.dump(results, f, indent=1)
os.rename(session["out"] + ".tmp", session["out"])
