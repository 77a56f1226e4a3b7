#!/usr/bin/env python3
"""Prints the build targets that the ctest tests matching a regular expression run, one per
line, so that a test stage builds only those (and what they depend on) instead of everything:
  scripts/test-targets.py BUILD_DIR REGEX
BUILD_DIR must be configured. A target is needed when a selected test's command or properties
(its environment) name its artifact or the directory holding it (the NCCL stand-in is named by
its directory); the tests are read from the CTestTestfile.cmake files CMake writes. Tests that doctest discovers after a build appear before it as one placeholder,
TARGET_NOT_BUILT-HASH, in their folder's test list; by the project's naming rule (a test's name
starts with its folder under tests/, "pyframes/unit/...", "preload/unit/...", or for the NCCL
stand-in's own tests "standin/..."), the placeholder's target is needed when REGEX names that
folder (holds "pyframes/unit/") or matches it followed by "/". Exit status 1 when no selected
test needs any target (a wrong regex, or a tree without tests), 2 on wrong arguments."""

import glob
import json
import os
import re
import subprocess
import sys


def targets_with_artifacts(build):
    """{target name: [absolute artifact paths]} from CMake's file API (CMake 3.14+)."""
    query = os.path.join(build, ".cmake", "api", "v1", "query", "codemodel-v2")
    reply = os.path.join(build, ".cmake", "api", "v1", "reply")
    if not os.path.exists(query) or not glob.glob(os.path.join(reply, "index-*.json")):
        os.makedirs(os.path.dirname(query), exist_ok=True)
        open(query, "w").close()
        subprocess.run(["cmake", build], check=True, stdout=subprocess.DEVNULL)
    with open(sorted(glob.glob(os.path.join(reply, "index-*.json")))[-1]) as f:
        index = json.load(f)
    codemodel = next(o for o in index["objects"] if o["kind"] == "codemodel")
    with open(os.path.join(reply, codemodel["jsonFile"])) as f:
        model = json.load(f)
    artifacts = {}
    for configuration in model["configurations"]:
        for target in configuration["targets"]:
            with open(os.path.join(reply, target["jsonFile"])) as f:
                detail = json.load(f)
            paths = [os.path.normpath(os.path.join(build, a["path"])) for a in detail.get("artifacts", [])]
            if paths:
                artifacts[target["name"]] = paths
    return artifacts


def test_file_lines(path):
    """The lines of one CTest file, with those of the files it includes (doctest's list of the
    tests it discovered, or its placeholder), stripped; both branches of an if() are read."""
    with open(path) as f:
        lines = [line.strip() for line in f.read().splitlines()]
    for line in lines:
        included = re.match(r'^include\("(.+)"\)$', line)
        if included:
            if os.path.exists(included.group(1)):
                yield from test_file_lines(included.group(1))
        else:
            yield line


def test_files(directory):
    """The lines of a build directory's CTestTestfile.cmake, its includes and its subdirectories':
    the tests as CMake wrote them, with full paths whether or not the programs are built yet
    (ctest --show-only leaves out the command of a program not built)."""
    path = os.path.join(directory, "CTestTestfile.cmake")
    if not os.path.exists(path):
        return
    for line in test_file_lines(path):
        sub = re.match(r'^subdirs\("(.+)"\)$', line)
        if sub:
            yield from test_files(os.path.join(directory, sub.group(1)))
        else:
            yield line


def selected_tests(build, regex):
    """({test name: [words of its command and properties]} of the tests REGEX selects, [targets
    of doctest placeholders])."""
    pattern = re.compile(regex)
    words, placeholders = {}, []
    for line in test_files(build):
        test = re.match(r"^(add_test|set_tests_properties)\((?:\[=\[(.*?)\]=\]|(\S+)) (.*)\)$", line)
        if not test:
            continue
        name = test.group(2) if test.group(2) is not None else test.group(3)
        placeholder = re.match(r"^(.+)_NOT_BUILT(-[0-9a-f]+)?$", name)
        if placeholder:
            placeholders.append(placeholder.group(1))
        elif pattern.search(name):
            rest = re.sub(r'WORKING_DIRECTORY "[^"]*"', "", test.group(4))  # a folder to run in
            rest = re.sub(r'_BACKTRACE_TRIPLES "[^"]*"', "", rest)
            words.setdefault(name, []).extend(re.findall(r'"([^"]*)"', rest))
    return words, sorted(set(placeholders))


def test_folder(build_folder):
    """The name prefix of the tests a doctest binary in BUILD_FOLDER (relative to the build) holds:
    its folder under tests/ (tests/pyframes/unit -> pyframes/unit), or standin for the stand-in's
    own tests (standin/tests)."""
    folder = build_folder.replace(os.sep, "/")
    if folder.startswith("tests/"):
        folder = folder[len("tests/"):]
    if folder.endswith("/tests"):
        folder = folder[:-len("/tests")]
    return folder


def paths_in(words):
    return {os.path.normpath(w) for word in words for w in re.split(r"[\s=;:,]+", word) if w.startswith("/")}


def main():
    if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help"):
        sys.stdout.write(__doc__)
        return 0
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    build, regex = os.path.abspath(sys.argv[1]), sys.argv[2]
    artifacts = targets_with_artifacts(build)
    tests, placeholders = selected_tests(build, regex)
    named = paths_in(w for test_words in tests.values() for w in test_words)
    needed = set()
    for target, paths in artifacts.items():
        for path in paths:
            if path in named or os.path.dirname(path) in named:
                needed.add(target)
    pattern = re.compile(regex)
    for target in placeholders:
        folder = next((test_folder(os.path.dirname(os.path.relpath(p, build)))
                       for p in artifacts.get(target, [])), None)
        if folder and (folder + "/" in regex or pattern.search(folder + "/")):
            needed.add(target)
    if not needed:
        sys.stderr.write("test-targets: no test matching %r in %s runs a target of this build\n" % (regex, build))
        return 1
    print("\n".join(sorted(needed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
