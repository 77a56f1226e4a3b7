"""The README's commands and option tables agree with the programs they describe:

  * every command line in the README's code blocks that runs pyframes, hangshim (any
    subcommand) or a script under scripts/ names a program that exists, and every long option
    it uses is one that program's --help lists (options after a bare `--` belong to the command
    being run and are left alone);
  * every long option a program's --help lists appears in the README (the option tables), so
    nothing the tools accept goes undocumented;
  * every HANGSHIM_* environment variable the sources read (a string literal in C++/Python, a
    variable in a bash script) has a row in the README's table of environment variables.

The commands themselves run in the feature tests (tests/demo runs the README's demo command as
written; tests/report, tests/integration, tests/core, tests/gdb run the others on real jobs).

    check_readme.py --source DIR --pyframes EXE --hangshim EXE
"""

import argparse
import os
import re
import shlex
import subprocess
import sys

OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")


def code_lines(readme):
    """(line number, text) of every line inside a fenced code block."""
    inside = False
    with open(readme) as f:
        for number, line in enumerate(f, 1):
            if line.lstrip().startswith("```"):
                inside = not inside
                continue
            if inside:
                yield number, line.rstrip("\n")


def strip_comment(line):
    """The line without a trailing shell comment (a # after whitespace, outside quotes)."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


def help_text(argv):
    run = subprocess.run(argv + ["--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True, timeout=60)
    if run.returncode != 0:
        raise RuntimeError("%s --help exited %d: %s" % (" ".join(argv), run.returncode, run.stdout.strip()))
    return run.stdout


ENV_SOURCES = ["preload", "pyframes", "gdb", "scripts", "tests/scenarios", "tests/fakenccl"]


def environment_variables(source):
    """{name: first file} of the HANGSHIM_* variables the sources read."""
    found = {}
    for root in ENV_SOURCES:
        for directory, _, files in os.walk(os.path.join(source, root)):
            for name in files:
                path = os.path.join(directory, name)
                try:
                    with open(path, errors="replace") as f:
                        text = f.read()
                except OSError:
                    continue
                if name.endswith((".cpp", ".h", ".c", ".py")):
                    patterns = [r'"(HANGSHIM_[A-Z0-9_]*[A-Z0-9])"']
                elif text.startswith("#!") and "bash" in text.splitlines()[0]:
                    patterns = [r"\$\{?(HANGSHIM_[A-Z0-9_]*[A-Z0-9])", r"(?:^|\s)(HANGSHIM_[A-Z0-9_]*[A-Z0-9])="]
                else:
                    continue
                for pattern in patterns:
                    for m in re.finditer(pattern, text, re.M):
                        found.setdefault(m.group(1), os.path.relpath(path, source))
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True)
    parser.add_argument("--pyframes", required=True)
    parser.add_argument("--hangshim", required=True)
    args = parser.parse_args()
    readme_path = os.path.join(args.source, "README.md")
    with open(readme_path) as f:
        readme = f.read()
    subcommands = ["ledger", "report", "export", "run", "watch"]
    programs = {"pyframes": [args.pyframes]}
    for sub in subcommands:
        programs["hangshim " + sub] = [args.hangshim, sub]
    scripts_dir = os.path.join(args.source, "scripts")
    for name in sorted(os.listdir(scripts_dir)):
        path = os.path.join(scripts_dir, name)
        if os.access(path, os.X_OK) and not name.startswith("gen_"):
            programs["scripts/" + name] = [path]
    helps = {}
    problems = []
    for name, argv in programs.items():
        try:
            helps[name] = help_text(argv)
        except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
            problems.append("%s: %s" % (name, e))

    checked = 0
    for number, raw in code_lines(readme_path):
        line = strip_comment(raw).strip()
        line = re.sub(r"^\$ ", "", line)
        try:
            words = shlex.split(line)
        except ValueError:  # an unbalanced quote: a fragment, not a command
            words = line.split()
        while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):  # VAR=value command
            words.pop(0)
        if not words:
            continue
        word = words[0]
        base = os.path.basename(word)
        if base == "hangshim" and len(words) > 1 and words[1] in subcommands:
            name, rest = "hangshim " + words[1], words[2:]
        elif base == "pyframes":
            name, rest = "pyframes", words[1:]
        elif word.startswith("scripts/"):
            name, rest = word, words[1:]
            if name not in programs:
                problems.append("README.md:%d: %s does not exist or is not executable" % (number, word))
                continue
        else:
            continue
        if name not in helps:
            continue
        checked += 1
        if "--" in rest:
            rest = rest[:rest.index("--")]
        for option in [w.split("=", 1)[0] for w in rest if OPTION.fullmatch(w.split("=", 1)[0])]:
            if option not in OPTION.findall(helps[name]):
                problems.append("README.md:%d: `%s` uses %s, which `%s --help` does not list" %
                                (number, line, option, name))
    for name, text in sorted(helps.items()):
        for option in sorted(set(OPTION.findall(text))):
            if option in ("--help", "--version"):
                continue
            if not re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(option), readme):
                problems.append("%s --help lists %s, which the README never documents" % (name, option))
    for name, path in sorted(environment_variables(args.source).items()):
        if "| `%s`" % name not in readme:
            problems.append("%s (read in %s) has no row in the README's environment variables table" % (name, path))
    print("check_readme: %d command lines checked against %d programs' --help" % (checked, len(helps)))
    for p in problems:
        print("FAIL: " + p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
