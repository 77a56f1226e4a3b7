"""Unit tests of the extension's gdb-free parts: the text it reads from gdb and /proc, its
command arguments, and its round trip through pyframes for the --native merge (the rule is
pyframes' own, in C++)."""
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "gdb"))
sys.path.insert(0, os.path.join(HERE, "..", "pyframes", "native"))

from hangshim_gdb import frames_text, libpython_text, native_merge, parsing  # noqa: E402
import native_checks  # noqa: E402  (tests/pyframes/native: binutils' view of the interpreter)

STRIPPED_PYTHON = "/usr/bin/python3.11"


class InfoTarget(unittest.TestCase):
    def test_core_path(self):
        text = ("Symbols from \"/usr/bin/python3.11\".\nLocal core dump file:\n"
                "\t`/tmp/a dir/core.it\\'s.5737', file type elf64-x86-64.\n\t0x400000 - 0x41f000 is load1\n")
        self.assertEqual(parsing.core_path_from_info_target(text), "/tmp/a dir/core.it\\'s.5737")

    def test_live_process_has_no_core(self):
        text = "Symbols from \"/usr/bin/python3.11\".\nNative process:\n\tUsing the running image of attached Thread\n"
        self.assertIsNone(parsing.core_path_from_info_target(text))

    def test_target_kind(self):  # gdb 9 and 10: no Inferior.connection, the kind from `info target`
        live = "Symbols from \"/usr/bin/python3.8\".\nNative process:\n\tUsing the running image of attached Thread\n"
        core = ("Symbols from \"/usr/bin/python3.8\".\nLocal core dump file:\n\t`/tmp/core.1', file type elf64-x86-64.\n"
                "Local exec file:\n\t`/usr/bin/python3.8', file type elf64-x86-64.\n")
        self.assertEqual(parsing.target_kind_from_info_target(live), "native")
        self.assertEqual(parsing.target_kind_from_info_target(core), "core")
        for layer in ("Remote serial target in gdb-specific protocol:", "Extended remote serial target in gdb-specific protocol:",
                      "Remote target using gdb-specific protocol:", "Extended remote target using gdb-specific protocol:"):
            self.assertEqual(parsing.target_kind_from_info_target("Symbols from \"/x\".\n%s\n\tDebugging a target over a serial line.\n" % layer),
                             "remote", layer)
        self.assertIsNone(parsing.target_kind_from_info_target("Symbols from \"/usr/bin/python3.8\".\nLocal exec file:\n"))

    def test_sysroot(self):
        self.assertIsNone(parsing.root_from_sysroot("target:"))
        self.assertIsNone(parsing.root_from_sysroot(""))
        self.assertIsNone(parsing.root_from_sysroot(None))
        self.assertEqual(parsing.root_from_sysroot("/srv/node7"), "/srv/node7")
        self.assertEqual(parsing.root_from_sysroot("target:/srv/node7"), "/srv/node7")

    def test_solib_search_path(self):
        self.assertEqual(parsing.lib_search_from_solib_path("/a::/b c"), ["/a", "/b c"])
        self.assertEqual(parsing.lib_search_from_solib_path(""), [])


class Mappings(unittest.TestCase):
    LEDGER = "/dev/shm/hangshim-0/hangshim-r00001-node_7-4242.ledger"

    def test_proc_maps(self):
        text = ("00400000-0041f000 r--p 00000000 08:01 123 /usr/bin/python3.11\n"
                "7f0000000000-7f0000209000 rw-s 00000000 00:1a 99   %s\n"
                "7ffd0000-7ffd1000 rw-p 00000000 00:00 0 \n" % self.LEDGER)
        maps = parsing.parse_proc_maps(text)
        self.assertEqual([(m.start, m.end, m.offset, m.path) for m in maps],
                         [(0x400000, 0x41f000, 0, "/usr/bin/python3.11"),
                          (0x7f0000000000, 0x7f0000209000, 0, self.LEDGER), (0x7ffd0000, 0x7ffd1000, 0, "")])

    def test_gdb_mappings_live_and_core(self):
        live = ("          Start Addr           End Addr       Size     Offset  Perms  objfile\n"
                "      0x7f0000000000     0x7f0000209000   0x209000        0x0  rw-s   %s\n" % self.LEDGER)
        core = ("          Start Addr           End Addr       Size     Offset objfile\n"
                "      0x7f0000000000     0x7f0000100000   0x100000        0x0 %s\n"
                "      0x7f0000100000     0x7f0000209000   0x109000   0x100000 %s\n" % (self.LEDGER, self.LEDGER))
        self.assertEqual(parsing.ledger_regions(parsing.parse_gdb_mappings(live)),
                         [(self.LEDGER, 0x7f0000000000, 0x7f0000209000)])
        # A mapping split in two (mprotect) is joined again.
        self.assertEqual(parsing.ledger_regions(parsing.parse_gdb_mappings(core)),
                         [(self.LEDGER, 0x7f0000000000, 0x7f0000209000)])

    def test_ledger_names(self):
        self.assertEqual(parsing.ledger_name_pid(self.LEDGER), 4242)
        self.assertEqual(parsing.ledger_name_pid("/x/hangshim-norank-host.a-17.ledger (deleted)"), 17)
        for other in ("/x/hangshim-r1-host-17.stacks.txt", "/x/hangshim-host-17.ledger", "/x/libc.so.6",
                      "/x/hangshim-r00001-node-7-x.ledger", ""):
            self.assertIsNone(parsing.ledger_name_pid(other), other)

    def test_a_ledger_piece_without_its_header_is_not_taken(self):
        maps = [parsing.Mapping(0x1000, 0x2000, 0x1000, self.LEDGER)]
        self.assertEqual(parsing.ledger_regions(maps), [])


class CoreSections(unittest.TestCase):
    # `maintenance info sections` of gdb 13 on a gcore'd core (the executable's own sections
    # first); load4 holds fewer bytes than it maps, so BFD splits it into load4a and load4b.
    TEXT = ("Exec file: `/usr/bin/python3.11', file type elf64-x86-64.\n"
            " [0]      0x00000318->0x00000334 at 0x00000318: .interp ALLOC LOAD READONLY DATA HAS_CONTENTS\n"
            "Core file: `/tmp/core.1', file type elf64-x86-64.\n"
            " [0]      0x00000000->0x00006abc at 0x0097af90: note0 READONLY HAS_CONTENTS\n"
            " [14]     0x557c9b213000->0x557c9b214000 at 0x00000f90: load1 ALLOC LOAD READONLY HAS_CONTENTS\n"
            " [15]     0x7fc878a82000->0x7fc878a84000 at 0x002c6f90: load2 ALLOC LOAD READONLY HAS_CONTENTS\n"
            " [16]     0x7fc878a84000->0x7fc878a85000 at 0x002c8f90: load3 ALLOC LOAD HAS_CONTENTS\n"
            " [17]     0x7fc878a90000->0x7fc878a91000 at 0x002c9f90: load4a ALLOC LOAD HAS_CONTENTS\n"
            " [18]     0x7fc878a91000->0x7fc878a98000 at 0x002caf90: load4b ALLOC\n")

    def test_sections_with_contents(self):
        self.assertEqual(parsing.core_sections_with_contents(self.TEXT),
                         [(0x557c9b213000, 0x557c9b214000), (0x7fc878a82000, 0x7fc878a84000),
                          (0x7fc878a84000, 0x7fc878a85000), (0x7fc878a90000, 0x7fc878a91000)])

    def test_holds(self):
        sections = parsing.core_sections_with_contents(self.TEXT)
        self.assertTrue(parsing.core_holds(sections, 0x7fc878a82000, 0x7fc878a85000))  # across two
        self.assertFalse(parsing.core_holds(sections, 0x7fc878a90000, 0x7fc878a98000))  # the part left out
        self.assertFalse(parsing.core_holds(sections, 0x7fc878a80000, 0x7fc878a82000))  # not in the core
        self.assertFalse(parsing.core_holds([], 0x1000, 0x2000))


class Arguments(unittest.TestCase):
    def test_list_range(self):
        self.assertEqual(parsing.parse_list_range("", 10), (5, 15))
        self.assertEqual(parsing.parse_list_range("", 2), (1, 7))
        self.assertEqual(parsing.parse_list_range("40", 10), (35, 45))
        self.assertEqual(parsing.parse_list_range(" 3, 9 ", 10), (3, 9))
        for bad in ("0", "x", "9,3", "1,", "-2"):
            with self.assertRaises(parsing.UsageError):
                parsing.parse_list_range(bad, 10)
        with self.assertRaises(parsing.UsageError):
            parsing.parse_list_range("", 0)

    def test_counts(self):
        self.assertEqual(parsing.parse_count("", "up"), 1)
        self.assertEqual(parsing.parse_count(" 3 ", "up"), 3)
        for bad in ("0", "-1", "two"):
            with self.assertRaises(parsing.UsageError):
                parsing.parse_count(bad, "up")
        self.assertEqual(parsing.parse_frame_number("2"), 2)
        with self.assertRaises(parsing.UsageError):
            parsing.parse_frame_number("")


class Printable(unittest.TestCase):
    def test_control_characters_from_the_target_are_escaped(self):
        self.assertEqual(frames_text.printable("a\x1b[31mb\nc\x9bd\x7f"), "a\\x1b[31mb\\x0ac\\x9bd\\x7f")
        self.assertEqual(frames_text.printable(u"caf\u00e9 \u540d"), u"caf\u00e9 \u540d")
        self.assertEqual(frames_text.printable(None), "")

    def test_frame_line(self):
        frame = {"function": "f", "qualname": "C.f", "file": "/x/\x1bevil.py", "line": 3}
        self.assertEqual(frames_text.frame_line("#2", frame), "#2  C.f (/x/\\x1bevil.py:3)")
        self.assertEqual(frames_text.frame_line("#0", {"function": "g", "file": "<string>", "line": 0}), "#0  g (<string>)")


class LibpythonText(unittest.TestCase):
    """libpython.py's formats (Tools/gdb/libpython.py: '%4s    %s' listings, 'Frame 0x...'
    summaries, '  File ...' tracebacks)."""

    def test_listing_marks_the_current_line_in_the_number_column(self):
        lines = ["def baz(*args):", "    id(42)", "", "foo(1, 2, 3)"]
        self.assertEqual(libpython_text.listing_lines(lines, 1, 11, 2),
                         ["   1    def baz(*args):", "  >2        id(42)", "   3    ", "   4    foo(1, 2, 3)"])
        self.assertEqual(libpython_text.listing_lines(["x"] * 120, 100, 100, 100), [">100    x"])

    def test_listing_stops_at_the_last_line(self):
        self.assertEqual(len(libpython_text.listing_lines(["a", "b"], 1, 9, 1)), 2)

    def test_frame_repr(self):
        frame = {"function": "bar", "file": "/srv/s.py", "line": 7, "frame_address": 0x7f00,
                 "locals": [{"name": "x", "repr": "5", "argument": False}, {"name": "a", "repr": "1", "argument": True}]}
        self.assertEqual(libpython_text.frame_repr(frame), "Frame 0x7f00, for file /srv/s.py, line 7, in bar (a=1, x=5)")
        self.assertEqual(libpython_text.frame_repr({"function": "<module>", "file": "m.py", "line": 1}),
                         "Frame 0x0, for file m.py, line 1, in <module> ()")

    def test_long_reprs_are_cut_as_libpython_cuts_them(self):
        self.assertEqual(libpython_text.truncated("x" * 2000), "x" * 1024 + "...(truncated)")


class SourceLines(unittest.TestCase):
    def test_no_line_after_the_last_newline(self):
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".py") as f:
            f.write("a\nb\n")
            f.flush()
            target = type("T", (), {"kind": "core", "root": None})()
            self.assertEqual(frames_text.Sources(target).lines(f.name), ["a", "b"])


def py(name, entry=False):
    frame = {"kind": "python", "function": name, "file": "/w/%s.py" % name, "line": 7}
    if entry:
        frame["entry"] = True
    return frame


_pcs = iter(range(0x401000, 0x500000, 0x10))


def native(name):
    return {"name": name, "pc": next(_pcs), "level": 0, "where": "/usr/lib/libpython.so"}


def thread(python, truncated=False):
    return {"native_id": 4242, "thread_id": 1, "frames": python, "truncated": truncated}


@unittest.skipUnless(os.environ.get("PYFRAMES"), "PYFRAMES (the pyframes executable that merges) is not set")
class NativeMerge(unittest.TestCase):
    """The merge is pyframes' (C++); these check the extension's round trip through it."""

    def test_one_frame_per_call_up_to_3_10(self):
        python = [py("f", True), py("g", True)]
        stack = [native("sleep"), native("_PyEval_EvalFrameDefault"), native("call"),
                 native("_PyEval_EvalFrameDefault"), native("main")]
        merged, note = native_merge.merge(thread(python), stack, "")
        self.assertEqual(note, "")
        self.assertEqual(merged, [("native", stack[0]), ("python", 0), ("native", stack[2]), ("python", 1),
                                  ("native", stack[4])])

    def test_runs_end_at_entry_frames_from_3_11(self):
        python = [py("f"), py("g", True), py("h"), py("<module>", True)]
        stack = [native("sleep"), native("_PyEval_EvalFrameDefault"), native("call"),
                 native("_PyEval_EvalFrameDefault.cold"), native("main")]
        merged, note = native_merge.merge(thread(python), stack, "")
        self.assertEqual(note, "")
        self.assertEqual(merged, [("native", stack[0]), ("python", 0), ("python", 1), ("native", stack[2]),
                                  ("python", 2), ("python", 3), ("native", stack[4])])

    def test_counts_that_differ_are_not_merged(self):
        merged, note = native_merge.merge(thread([py("f", True), py("g", True)]),
                                          [native("_PyEval_EvalFrameDefault")], "")
        self.assertIsNone(merged)
        self.assertEqual(note, "native stack not merged: 1 call of the evaluation loop for 2 runs of Python frames")

    def test_a_cut_python_stack_is_not_merged(self):
        merged, note = native_merge.merge(thread([py("f", True)], True), [native("_PyEval_EvalFrameDefault")], "")
        self.assertIsNone(merged)
        self.assertIn("incomplete", note)

    def test_where_gdb_stopped_unwinding_is_said(self):
        stack = [native("sleep"), native("_PyEval_EvalFrameDefault")]
        merged, note = native_merge.merge(thread([py("f", True)]), stack, "previous frame inner to this frame")
        self.assertEqual(merged, [("native", stack[0]), ("python", 0)])
        self.assertIn("previous frame inner to this frame", note)

    def test_no_native_frames(self):
        merged, note = native_merge.merge(thread([py("f", True)]), [], "")
        self.assertIsNone(merged)
        self.assertIn("not available", note)

    def test_eval_loop_names(self):
        for name in ("_PyEval_EvalFrameDefault", "_PyEval_EvalFrameDefault.cold"):
            merged, _ = native_merge.merge(thread([py("f", True)]), [native(name)], "")
            self.assertEqual(merged, [("python", 0)], name)
        for other in ("_PyEval_EvalFrame", "_PyEval_EvalFrameDefaultX", "PyEval_EvalFrameEx", None, ""):
            merged, _ = native_merge.merge(thread([py("f", True)]), [native(other)], "", mappings=[])
            self.assertIsNone(merged, other)

    @unittest.skipUnless(os.path.exists(STRIPPED_PYTHON), "no %s (Debian's python3.11)" % STRIPPED_PYTHON)
    def test_frames_gdb_cannot_name_are_named_through_the_mappings(self):
        """gdb shows "??" for the evaluation loop's split-off part in a stripped interpreter; with
        the target's mappings pyframes names it, and merges there. Where that part is comes from
        binutils (tests/pyframes/native/native_checks.py), the mappings from a running interpreter."""
        parts = native_checks.eval_loop_split_parts(STRIPPED_PYTHON)
        if not parts:
            self.skipTest("%s has no split-off part of the evaluation loop" % STRIPPED_PYTHON)
        sleeper = subprocess.Popen([STRIPPED_PYTHON, "-c", "import time; print(flush=True); time.sleep(60)"],
                                   stdout=subprocess.PIPE)
        try:
            sleeper.stdout.readline()  # it runs: its mappings are the interpreter's
            with open("/proc/%d/maps" % sleeper.pid) as f:
                mappings = parsing.parse_proc_maps(f.read())
        finally:
            sleeper.kill()
            sleeper.wait()
        start, end = parts[0]
        unnamed = {"name": None, "pc": (start + end) // 2, "level": 1, "where": STRIPPED_PYTHON}
        stack = [native("sleep"), unnamed, native("main")]
        merged, note = native_merge.merge(thread([py("f", True)]), stack, "", mappings=mappings)
        self.assertEqual(merged, [("native", stack[0]), ("python", 0), ("native", stack[2])], note)
        # Without the mappings nothing names it: not merged, never merged wrongly.
        merged, note = native_merge.merge(thread([py("f", True)]), stack, "", mappings=[])
        self.assertIsNone(merged)
        self.assertIn("0 calls of the evaluation loop", note)


if __name__ == "__main__":
    unittest.main()
