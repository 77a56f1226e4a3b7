"""The documents (README.md and every docs/**/*.md page) agree with the programs they describe:

  * every command line in a code block that runs pyframes, hangshim (any subcommand) or a script
    under scripts/ names a program that exists, and every long option it uses is one that
    program's --help lists (options after a bare `--` belong to the command being run and are
    left alone; tests/system/gpu/run.sh counts as one of the scripts);
  * every long option a program's --help lists appears in the documents (the option tables), so
    nothing the tools accept goes undocumented;
  * every HANGSHIM_* environment variable the sources read (a string literal in C++/Python, a
    variable in a bash script) has exactly one row in the documents' tables of environment
    variables: documented, and in one place;
  * every relative link between the documents resolves: the file exists, and an #anchor in a
    Markdown file names one of its headings (GitHub's rule: lowercase, punctuation dropped,
    spaces to '-', repeats numbered -1, -2, ...);
  * the CPython range the documents name ("CPython 3.6-3.15", "3.6 to 3.15") is the one
    `pyframes --version` prints (pyframes/include/pyframes/versions.h), and the README names it;
  * README.md is at most 400 lines, and every docs page links back to it near its top;
  * no test-run diary: no line outside code blocks pairs a date with a run, a load, a flake or a
    measurement, and none says "checked by hand" or "clean clone of" (those belong in commit
    messages).

The commands themselves run in the feature tests (tests/system/demo runs the README's demo command as
written; tests/preload/report, tests/pyframes/live, tests/pyframes/core, tests/gdb run the others on real jobs).

    check_readme.py --source DIR --pyframes EXE --hangshim EXE
"""

import glob
import os
import re
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from driver import required_args  # noqa: E402

OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
README_MAX_LINES = 400
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")
DIARY_WORDS = re.compile(r"\b(runs?|ran|loaded|load average|flakes?|flaky|measured|checked|passed|failed|failures?)\b", re.I)
DIARY_PHRASES = re.compile(r"checked by hand|clean clone of", re.I)
RANGE = re.compile(r"CPython (3\.\d+) ?(?:-|–|to) ?(3\.\d+)")


def documents(source):
    """The documents checked, relative to source: README.md, then docs/**/*.md."""
    pages = sorted(os.path.relpath(p, source)
                   for p in glob.glob(os.path.join(source, "docs", "**", "*.md"), recursive=True))
    return ["README.md"] + pages


def split_lines(text):
    """(line number, text, inside a fenced code block) of every line; fence lines are left out."""
    inside = False
    for number, line in enumerate(text.split("\n"), 1):
        if line.lstrip().startswith("```"):
            inside = not inside
            continue
        yield number, line, inside


def slug(heading):
    """GitHub's anchor for a heading: link text kept, lowercase, punctuation dropped, spaces to '-'."""
    heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    heading = re.sub(r"[^\w\- ]", "", heading)
    return heading.replace(" ", "-")


def anchors(text):
    seen, found = {}, set()
    for _, line, inside in split_lines(text):
        m = None if inside else re.match(r"#{1,6} (.*)", line)
        if m:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            found.add(s if n == 0 else "%s-%d" % (s, n))
    return found


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


def supported_range(pyframes):
    """("3.6", "3.15") from `pyframes --version`."""
    run = subprocess.run([pyframes, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True, timeout=60)
    m = re.search(r"reads CPython (3\.\d+)-(3\.\d+)", run.stdout)
    if run.returncode != 0 or not m:
        raise RuntimeError("pyframes --version names no CPython range: %r" % run.stdout.strip())
    return m.group(1), m.group(2)


ENV_SOURCES = ["preload", "pyframes", "gdb", "scripts", "tests/system/scenarios", "standin", "tests/system/gpu"]


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


def check_commands(texts, helps, programs, subcommands, problems):
    checked = 0
    for doc, text in texts.items():
        for number, raw, inside in split_lines(text):
            if not inside:
                continue
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
            elif word.startswith("scripts/") or word == "tests/system/gpu/run.sh":
                name, rest = word, words[1:]
                if name not in programs:
                    problems.append("%s:%d: %s does not exist or is not executable" % (doc, number, word))
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
                    problems.append("%s:%d: `%s` uses %s, which `%s --help` does not list" %
                                    (doc, number, line, option, name))
    return checked


def check_links(source, texts, problems):
    known = {doc: anchors(text) for doc, text in texts.items()}
    checked = 0
    for doc, text in texts.items():
        for number, line, inside in split_lines(text):
            if inside:
                continue
            for m in LINK.finditer(re.sub(r"`[^`]*`", "``", line)):
                target = m.group(1)
                if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
                    continue
                checked += 1
                path, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc
                if dest.startswith("..") or os.path.isabs(path):
                    problems.append("%s:%d: link %s leaves the repository" % (doc, number, target))
                    continue
                if not os.path.exists(os.path.join(source, dest)):
                    problems.append("%s:%d: link %s: no file %s" % (doc, number, target, dest))
                    continue
                if anchor and dest.endswith(".md"):
                    if dest not in known:
                        with open(os.path.join(source, dest)) as f:
                            known[dest] = anchors(f.read())
                    if anchor not in known[dest]:
                        problems.append("%s:%d: link %s: %s has no heading #%s" % (doc, number, target, dest, anchor))
    return checked


def check_diary(texts, problems):
    for doc, text in texts.items():
        for number, line, inside in split_lines(text):
            if inside:
                continue
            if DIARY_PHRASES.search(line) or (DATE.search(line) and DIARY_WORDS.search(line)):
                problems.append("%s:%d: a test-run diary line (dates of runs, flakes, hand checks belong in "
                                "commit messages): %s" % (doc, number, line.strip()[:120]))


def main():
    args = required_args("--source", "--pyframes", "--hangshim")
    texts = {}
    for doc in documents(args.source):
        with open(os.path.join(args.source, doc)) as f:
            texts[doc] = f.read()
    everything = "\n".join(texts.values())
    subcommands = ["ledger", "report", "export", "run", "watch"]
    programs = {"pyframes": [args.pyframes]}
    for sub in subcommands:
        programs["hangshim " + sub] = [args.hangshim, sub]
    scripts_dir = os.path.join(args.source, "scripts")
    for name in sorted(os.listdir(scripts_dir)):
        path = os.path.join(scripts_dir, name)
        if os.path.isfile(path) and os.access(path, os.X_OK) and not name.startswith("gen_"):
            programs["scripts/" + name] = [path]
    programs["tests/system/gpu/run.sh"] = [os.path.join(args.source, "tests", "system", "gpu", "run.sh")]
    helps = {}
    problems = []
    for name, argv in programs.items():
        try:
            helps[name] = help_text(argv)
        except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
            problems.append("%s: %s" % (name, e))

    checked = check_commands(texts, helps, programs, subcommands, problems)
    for name, text in sorted(helps.items()):
        for option in sorted(set(OPTION.findall(text))):
            if option in ("--help", "--version"):
                continue
            if not re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(option), everything):
                problems.append("%s --help lists %s, which no document (README.md, docs/) mentions" % (name, option))

    variables = environment_variables(args.source)
    for name, path in sorted(variables.items()):
        rows = [doc for doc, text in texts.items() for line in text.split("\n")
                if line.startswith("| `%s` |" % name)]
        if not rows:
            problems.append("%s (read in %s) has no row in a table of environment variables (README.md, docs/)"
                            % (name, path))
        elif len(rows) > 1:
            problems.append("%s has %d rows (%s): document it once" % (name, len(rows), ", ".join(rows)))

    links = check_links(args.source, texts, problems)

    try:
        oldest, newest = supported_range(args.pyframes)
        for doc, text in texts.items():
            for number, line, _ in split_lines(text):
                for m in RANGE.finditer(line):
                    if (m.group(1), m.group(2)) != (oldest, newest):
                        problems.append("%s:%d: says CPython %s-%s, but pyframes --version reads %s-%s" %
                                        (doc, number, m.group(1), m.group(2), oldest, newest))
        if not any(RANGE.search(line) for line in texts["README.md"].split("\n")):
            problems.append("README.md never names the CPython range pyframes reads (%s-%s)" % (oldest, newest))
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
        problems.append("pyframes --version: %s" % e)

    readme_lines = texts["README.md"].count("\n")
    if readme_lines > README_MAX_LINES:
        problems.append("README.md has %d lines; at most %d (move reference material to docs/)" %
                        (readme_lines, README_MAX_LINES))
    for doc, text in texts.items():
        if doc != "README.md":
            top = "\n".join(text.split("\n")[:8])
            back = os.path.relpath("README.md", os.path.dirname(doc))
            if "](%s)" % back not in top:
                problems.append("%s: its opening (first 8 lines) does not link back to %s" % (doc, back))
    check_diary(texts, problems)

    print("check_readme: %d documents; %d command lines checked against %d programs' --help; %d links; "
          "%d environment variables; README.md %d lines" %
          (len(texts), checked, len(helps), links, len(variables), readme_lines))
    for p in problems:
        print("FAIL: " + p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
