"""Source checks for what must never be in hangshim, anywhere in the tree:
  - C/C++: system(), popen(), or an exec of a shell ("sh -c"): a path or name from a target
    must never reach a shell;
  - Python (gdb/, scripts/, tests/): shell=True, os.system, os.popen, subprocess.getoutput /
    getstatusoutput; gdb.execute of gdb's own shell escapes ("shell", "!", "pipe", "|"), and
    gdb.execute of a command built from a variable unless the variable is listed below with
    why it is trusted;
  - pyframes (the engine and its CLI) never writes to a target: no process_vm_writev, no
    PTRACE_POKE*/SET* requests, /proc/PID/mem never opened for writing.
Each finding is printed as path:line: what.

    security_scan.py ROOT
"""

import os
import re
import sys

SKIP_DIRS = {".git", "build", "Testing"}

# gdb.execute("... %s" % x) that the extension makes from values it created itself.
TRUSTED_GDB_COMMANDS = {
    "generate-core-file": "the core path is a file in a directory the extension made with tempfile.mkdtemp",
    "help": "the name of one of the extension's own commands",
    "alias": "the extension's own command names",
}

C_RULES = [
    (re.compile(r"(?<![\w.])(?:std::)?system\s*\("), "system() runs a shell"),
    (re.compile(r"(?<![\w.])(?:::)?popen\s*\("), "popen() runs a shell"),
    (re.compile(r"\bexec[lv]p?e?\s*\([^;]*\"(?:/bin/)?(?:ba)?sh\""), "exec of a shell"),
    (re.compile(r"\"(?:/bin/)?(?:ba)?sh\"\s*,\s*\"-c\""), "a shell's -c argument"),
]
PY_RULES = [
    (re.compile(r"shell\s*=\s*True"), "subprocess with shell=True"),
    (re.compile(r"\bos\.(?:system|popen)\s*\("), "os.system/os.popen run a shell"),
    (re.compile(r"\bsubprocess\.(?:getoutput|getstatusoutput)\s*\("), "subprocess.getoutput runs a shell"),
    (re.compile(r"gdb\.execute\s*\(\s*[\"'](?:shell\b|!|pipe\b|\|)"), "gdb.execute of a shell escape"),
]
NO_WRITE_RULES = [
    (re.compile(r"process_vm_writev"), "process_vm_writev writes to a target"),
    (re.compile(r"PTRACE_(?:POKE\w*|SETREGS\w*|SETFPREGS|SETSIGINFO|SETOPTIONS|POKEUSER)"), "a ptrace request that writes to a target"),
    (re.compile(r"/mem\b[^;]*O_(?:RDWR|WRONLY)|O_(?:RDWR|WRONLY)[^;]*/mem\b"), "/proc/PID/mem opened for writing"),
]


def strip_c_comments(text):
    """Blanks comments and string contents' line structure is kept so line numbers stay right."""
    out = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", out)


def strip_py_comments(text):
    return re.sub(r"(?m)^\s*#[^\n]*", "", text)


def files(root, suffixes):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.startswith("build")]
        for name in filenames:
            if name.endswith(suffixes):
                yield os.path.join(dirpath, name)


def scan(path, text, rules, findings, root):
    for number, line in enumerate(text.splitlines(), 1):
        for pattern, what in rules:
            if pattern.search(line):
                findings.append("%s:%d: %s: %s" % (os.path.relpath(path, root), number, what, line.strip()))


def gdb_execute_findings(path, text, findings, root):
    """gdb.execute(<not a constant>) unless the command word is trusted."""
    for number, line in enumerate(text.splitlines(), 1):
        for m in re.finditer(r"gdb\.execute\s*\(\s*([^,)]*)", line):
            argument = m.group(1).strip()
            if re.fullmatch(r"[\"'][^\"'%{}]*[\"']", argument):
                continue  # a constant command
            word = re.match(r"[\"']([\w-]+)", argument)
            if word and word.group(1) in TRUSTED_GDB_COMMANDS:
                continue
            findings.append("%s:%d: gdb.execute of a command built from a value: %s"
                            % (os.path.relpath(path, root), number, line.strip()))


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    findings = []
    checked = 0
    for path in files(root, (".c", ".cc", ".cpp", ".h", ".hpp")):
        with open(path, errors="replace") as f:
            text = strip_c_comments(f.read())
        scan(path, text, C_RULES, findings, root)
        rel = os.path.relpath(path, root)
        if rel.startswith("pyframes" + os.sep):
            scan(path, text, NO_WRITE_RULES, findings, root)
        checked += 1
    for top in ("gdb", "scripts", "tests", "preload", "pyframes"):
        for path in files(os.path.join(root, top), (".py", ".py.in")):
            with open(path, errors="replace") as f:
                text = strip_py_comments(f.read())
            if os.path.relpath(path, root) == os.path.join("tests", "system", "faults", "security_scan.py"):
                continue  # this file names every pattern it looks for
            scan(path, text, PY_RULES, findings, root)
            if os.path.relpath(path, root).startswith("gdb" + os.sep):
                gdb_execute_findings(path, text, findings, root)
            checked += 1
    for finding in findings:
        print(finding)
    print("%d files checked, %d finding(s)" % (checked, len(findings)))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
