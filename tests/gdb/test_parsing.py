"""Unit tests of the extension's gdb-free parts: the text it reads from gdb and /proc, its
command arguments and the --native merge rule (the one pyframes --native applies)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "gdb"))

from hangshim_gdb import frames_text, native_merge, parsing  # noqa: E402


class InfoTarget(unittest.TestCase):
    def test_core_path(self):
        text = ("Symbols from \"/usr/bin/python3.11\".\nLocal core dump file:\n"
                "\t`/tmp/a dir/core.it\\'s.5737', file type elf64-x86-64.\n\t0x400000 - 0x41f000 is load1\n")
        self.assertEqual(parsing.core_path_from_info_target(text), "/tmp/a dir/core.it\\'s.5737")

    def test_live_process_has_no_core(self):
        text = "Symbols from \"/usr/bin/python3.11\".\nNative process:\n\tUsing the running image of attached Thread\n"
        self.assertIsNone(parsing.core_path_from_info_target(text))

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


def py(name, entry=False):
    return {"function": name, "entry": entry} if entry else {"function": name}


def native(name):
    return {"name": name}


class NativeMerge(unittest.TestCase):
    def test_one_frame_per_call_up_to_3_10(self):
        python = [py("f", True), py("g", True)]
        stack = [native("sleep"), native("_PyEval_EvalFrameDefault"), native("call"),
                 native("_PyEval_EvalFrameDefault"), native("main")]
        merged, note = native_merge.merge(python, stack)
        self.assertIsNone(note)
        self.assertEqual(merged, [("native", stack[0]), ("python", 0), ("native", stack[2]), ("python", 1),
                                  ("native", stack[4])])

    def test_runs_end_at_entry_frames_from_3_11(self):
        python = [py("f"), py("g", True), py("h"), py("<module>", True)]
        stack = [native("sleep"), native("_PyEval_EvalFrameDefault"), native("call"),
                 native("_PyEval_EvalFrameDefault.cold"), native("main")]
        merged, note = native_merge.merge(python, stack)
        self.assertIsNone(note)
        self.assertEqual(merged, [("native", stack[0]), ("python", 0), ("python", 1), ("native", stack[2]),
                                  ("python", 2), ("python", 3), ("native", stack[4])])

    def test_trailing_frames_without_an_entry_are_one_run(self):
        self.assertEqual(native_merge.python_runs([py("f"), py("g")]), 1)
        self.assertEqual(native_merge.python_runs([py("f", True), py("g")]), 2)
        self.assertEqual(native_merge.python_runs([]), 0)

    def test_counts_that_differ_are_not_merged(self):
        merged, note = native_merge.merge([py("f", True), py("g", True)], [native("_PyEval_EvalFrameDefault")])
        self.assertIsNone(merged)
        self.assertEqual(note, "native stack not merged: 1 call of the evaluation loop for 2 runs of Python frames")

    def test_a_cut_python_stack_is_not_merged(self):
        merged, note = native_merge.merge([py("f", True)], [native("_PyEval_EvalFrameDefault")], True)
        self.assertIsNone(merged)
        self.assertIn("incomplete", note)

    def test_eval_loop_names(self):
        self.assertTrue(native_merge.is_eval_loop("_PyEval_EvalFrameDefault"))
        self.assertTrue(native_merge.is_eval_loop("_PyEval_EvalFrameDefault.cold"))
        for other in ("_PyEval_EvalFrame", "_PyEval_EvalFrameDefaultX", "PyEval_EvalFrameEx", None, ""):
            self.assertFalse(native_merge.is_eval_loop(other), other)


if __name__ == "__main__":
    unittest.main()
