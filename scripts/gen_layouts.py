#!/usr/bin/env python3
"""Generates pyframes/src/layout/layout_tables_generated.cpp: the struct offsets pyframes needs,
for every CPython minor version from 3.6 to 3.13, measured by the C compiler.

For each interpreter's headers it writes a small C program that prints offsetof()/sizeof() of
every field the walker and the object readers use, compiles it against those headers (with
Py_BUILD_CORE for the internal/ headers) and runs it. Nothing is typed in by hand: a field that
does not exist in a version fails the compile, which is how the version ranges below are kept
honest.

Headers come from the pyenv interpreters (/root/.pyenv/versions/3.X*/include/python3.X*/).
Facts that no installed header holds come from CPython's own sources at the matching tag, read
from a git mirror at generation time (never copied into this repository):
  * Objects/dict-common.h (3.6-3.10): PyDictKeyEntry and struct _dictkeysobject, private there.
Pass the mirror with --cpython-git (the `fetch` of sailfishos-mirror/cpython gives one).

Extra header directories of the same minor version (--check-headers, e.g. Debian's
/usr/include/python3.11 for its 3.11.2) are measured too and must give identical numbers: one
table per minor version is only right if micro releases keep these layouts.

Free-threaded builds (--disable-gil: python3.13t, 3.14t) have a larger object header, so every
offset inside an object differs; they get their own tables, in their own file, measured against
the headers of such a build (scripts/build-pythons.sh makes them; no mirror is needed, they are
all 3.13+):
  scripts/gen_layouts.py --free-threaded PREFIX [--free-threaded PREFIX ...]
writes pyframes/src/layout/layout_tables_free_threaded.cpp (PREFIX: the build's install prefix,
holding include/python3.Xt).

Usage: scripts/gen_layouts.py --cpython-git DIR [--check-headers DIR ...] [--output FILE]
       scripts/gen_layouts.py --free-threaded PREFIX ... [--output FILE]
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

# (field name in pyframes::Layout, C expression, first version, first version without it)
# Versions are (3, minor) tuples; None = open end.
V = lambda minor: (3, minor)  # noqa: E731
FIELDS = [
    # _PyRuntimeState (3.7+; 3.6 has interp_head and _PyThreadState_Current as globals)
    ("runtime.size", "sizeof(_PyRuntimeState)", V(7), None),
    ("runtime.interpreters_head", "offsetof(_PyRuntimeState, interpreters.head)", V(7), None),
    ("runtime.interpreters_main", "offsetof(_PyRuntimeState, interpreters.main)", V(7), None),
    ("runtime.gilstate_tstate_current", "offsetof(_PyRuntimeState, gilstate.tstate_current)", V(7), V(12)),
    ("runtime.ceval_gil", "offsetof(_PyRuntimeState, ceval.gil)", V(7), V(12)),
    # The garbage collector's state: in _PyRuntimeState (3.7, 3.8), per interpreter from 3.9; 3.6
    # keeps `collecting` in a static variable of gcmodule.c, out of reach without symbols.
    ("runtime.gc", "offsetof(_PyRuntimeState, gc)", V(7), V(9)),
    ("interpreter.gc", "offsetof(PyInterpreterState, gc)", V(9), None),
    ("gc.collecting", "offsetof(struct _gc_runtime_state, collecting)", V(7), None),
    # struct _gil_runtime_state (3.7+)
    ("gil.locked", "offsetof(struct _gil_runtime_state, locked)", V(7), None),
    ("gil.last_holder", "offsetof(struct _gil_runtime_state, last_holder)", V(7), None),
    # PyInterpreterState
    ("interpreter.size", "sizeof(PyInterpreterState)", V(6), None),
    ("interpreter.next", "offsetof(PyInterpreterState, next)", V(6), None),
    ("interpreter.id", "offsetof(PyInterpreterState, id)", V(7), None),
    ("interpreter.tstate_head", "offsetof(PyInterpreterState, tstate_head)", V(6), V(11)),
    ("interpreter.tstate_head", "offsetof(PyInterpreterState, threads.head)", V(11), None),
    ("interpreter.modules", "offsetof(PyInterpreterState, modules)", V(6), V(12)),
    ("interpreter.modules", "offsetof(PyInterpreterState, imports.modules)", V(12), None),
    ("interpreter.sysdict", "offsetof(PyInterpreterState, sysdict)", V(6), None),
    ("interpreter.builtins", "offsetof(PyInterpreterState, builtins)", V(6), None),
    ("interpreter.ceval_gil", "offsetof(PyInterpreterState, ceval.gil)", V(12), None),
    # PyThreadState
    ("thread_state.size", "sizeof(PyThreadState)", V(6), None),
    ("thread_state.prev", "offsetof(PyThreadState, prev)", V(6), None),
    ("thread_state.next", "offsetof(PyThreadState, next)", V(6), None),
    ("thread_state.interp", "offsetof(PyThreadState, interp)", V(6), None),
    ("thread_state.frame", "offsetof(PyThreadState, frame)", V(6), V(11)),
    ("thread_state.cframe", "offsetof(PyThreadState, cframe)", V(11), V(13)),
    ("thread_state.frame", "offsetof(PyThreadState, current_frame)", V(13), None),
    ("thread_state.thread_id", "offsetof(PyThreadState, thread_id)", V(6), None),
    ("thread_state.native_thread_id", "offsetof(PyThreadState, native_thread_id)", V(11), None),
    # _PyCFrame (3.11, 3.12)
    ("cframe.current_frame", "offsetof(_PyCFrame, current_frame)", V(11), V(13)),
    # PyFrameObject (the frame chain up to 3.10)
    ("frame_object.size", "sizeof(PyFrameObject)", V(6), V(11)),
    ("frame_object.back", "offsetof(PyFrameObject, f_back)", V(6), V(11)),
    ("frame_object.code", "offsetof(PyFrameObject, f_code)", V(6), V(11)),
    ("frame_object.lasti", "offsetof(PyFrameObject, f_lasti)", V(6), V(11)),
    ("frame_object.lineno", "offsetof(PyFrameObject, f_lineno)", V(6), V(11)),
    ("frame_object.localsplus", "offsetof(PyFrameObject, f_localsplus)", V(6), V(11)),
    # _PyInterpreterFrame (3.11+)
    ("interpreter_frame.size", "sizeof(_PyInterpreterFrame)", V(11), None),
    ("interpreter_frame.previous", "offsetof(_PyInterpreterFrame, previous)", V(11), None),
    ("interpreter_frame.executable", "offsetof(_PyInterpreterFrame, f_code)", V(11), V(13)),
    ("interpreter_frame.executable", "offsetof(_PyInterpreterFrame, f_executable)", V(13), None),
    ("interpreter_frame.instr_ptr", "offsetof(_PyInterpreterFrame, prev_instr)", V(11), V(13)),
    ("interpreter_frame.instr_ptr", "offsetof(_PyInterpreterFrame, instr_ptr)", V(13), None),
    ("interpreter_frame.localsplus", "offsetof(_PyInterpreterFrame, localsplus)", V(11), None),
    ("interpreter_frame.owner", "offsetof(_PyInterpreterFrame, owner)", V(11), None),
    ("interpreter_frame.is_entry", "offsetof(_PyInterpreterFrame, is_entry)", V(11), V(12)),
    ("interpreter_frame.owner_generator", "FRAME_OWNED_BY_GENERATOR", V(11), None),
    # The lowest owner that is no Python frame: 3.14 put FRAME_OWNED_BY_INTERPRETER (the entry
    # frame each evaluation-loop run pushes) before FRAME_OWNED_BY_CSTACK.
    ("interpreter_frame.owner_shim", "FRAME_OWNED_BY_CSTACK", V(12), V(14)),
    ("interpreter_frame.owner_shim", "FRAME_OWNED_BY_INTERPRETER", V(14), None),
    # PyCodeObject
    ("code.size", "sizeof(PyCodeObject)", V(6), None),
    ("code.argcount", "offsetof(PyCodeObject, co_argcount)", V(6), None),
    ("code.posonlyargcount", "offsetof(PyCodeObject, co_posonlyargcount)", V(8), None),
    ("code.kwonlyargcount", "offsetof(PyCodeObject, co_kwonlyargcount)", V(6), None),
    ("code.nlocals", "offsetof(PyCodeObject, co_nlocals)", V(6), None),
    ("code.flags", "offsetof(PyCodeObject, co_flags)", V(6), None),
    ("code.firstlineno", "offsetof(PyCodeObject, co_firstlineno)", V(6), None),
    ("code.code", "offsetof(PyCodeObject, co_code)", V(6), V(11)),
    ("code.varnames", "offsetof(PyCodeObject, co_varnames)", V(6), V(11)),
    ("code.cellvars", "offsetof(PyCodeObject, co_cellvars)", V(6), V(11)),
    ("code.freevars", "offsetof(PyCodeObject, co_freevars)", V(6), V(11)),
    ("code.filename", "offsetof(PyCodeObject, co_filename)", V(6), None),
    ("code.name", "offsetof(PyCodeObject, co_name)", V(6), None),
    ("code.qualname", "offsetof(PyCodeObject, co_qualname)", V(11), None),
    ("code.linetable", "offsetof(PyCodeObject, co_lnotab)", V(6), V(10)),
    ("code.linetable", "offsetof(PyCodeObject, co_linetable)", V(10), None),
    ("code.localsplusnames", "offsetof(PyCodeObject, co_localsplusnames)", V(11), None),
    ("code.localspluskinds", "offsetof(PyCodeObject, co_localspluskinds)", V(11), None),
    ("code.nlocalsplus", "offsetof(PyCodeObject, co_nlocalsplus)", V(11), None),
    ("code.firsttraceable", "offsetof(PyCodeObject, _co_firsttraceable)", V(11), None),
    ("code.code_adaptive", "offsetof(PyCodeObject, co_code_adaptive)", V(11), None),
    # PyObject, PyVarObject, PyTypeObject, PyHeapTypeObject
    ("object.ob_type", "offsetof(PyObject, ob_type)", V(6), None),
    ("object.ob_size", "offsetof(PyVarObject, ob_size)", V(6), None),
    ("type.tp_name", "offsetof(PyTypeObject, tp_name)", V(6), None),
    ("type.tp_basicsize", "offsetof(PyTypeObject, tp_basicsize)", V(6), None),
    ("type.tp_flags", "offsetof(PyTypeObject, tp_flags)", V(6), None),
    ("type.tp_dictoffset", "offsetof(PyTypeObject, tp_dictoffset)", V(6), None),
    ("type.tp_dict", "offsetof(PyTypeObject, tp_dict)", V(6), None),
    ("type.ht_cached_keys", "offsetof(PyHeapTypeObject, ht_cached_keys)", V(6), None),
    ("type.flag_managed_dict", "Py_TPFLAGS_MANAGED_DICT", V(11), None),
    # Where a managed dict lives relative to its object (the accessor functions of
    # internal/pycore_object.h, applied to a probe object): 3.11 dict pointer and values pointer,
    # 3.12 one tagged dict-or-values word, 3.13 the dict pointer (values are inline).
    ("type.managed_dict_offset", "PROBE_DELTA(_PyObject_ManagedDictPointer)", V(11), V(12)),
    ("type.managed_dict_offset", "PROBE_DELTA(_PyObject_DictOrValuesPointer)", V(12), V(13)),
    ("type.managed_dict_offset", "PROBE_DELTA(_PyObject_ManagedDictPointer)", V(13), None),
    ("type.managed_values_offset", "PROBE_DELTA(_PyObject_ValuesPointer)", V(11), V(12)),
    ("type.flag_inline_values", "Py_TPFLAGS_INLINE_VALUES", V(13), None),
    # str (PEP 393)
    ("unicode.length", "offsetof(PyASCIIObject, length)", V(6), None),
    ("unicode.state", "offsetof(PyASCIIObject, state)", V(6), None),
    ("unicode.ascii_size", "sizeof(PyASCIIObject)", V(6), None),
    ("unicode.compact_size", "sizeof(PyCompactUnicodeObject)", V(6), None),
    ("unicode.data_any", "offsetof(PyUnicodeObject, data)", V(6), None),
    ("unicode.kind_shift", "state_bit_shift(KIND)", V(6), None),
    ("unicode.compact_shift", "state_bit_shift(COMPACT)", V(6), None),
    ("unicode.ascii_shift", "state_bit_shift(ASCII)", V(6), None),
    ("unicode.ready_shift", "state_bit_shift(READY)", V(6), V(12)),
    # bytes, int, float, tuple, list, cell
    ("bytes.ob_sval", "offsetof(PyBytesObject, ob_sval)", V(6), None),
    ("long_.ob_digit", "offsetof(PyLongObject, ob_digit)", V(6), V(12)),
    ("long_.ob_digit", "offsetof(PyLongObject, long_value.ob_digit)", V(12), None),
    ("long_.lv_tag", "offsetof(PyLongObject, long_value.lv_tag)", V(12), None),
    ("long_.digit_size", "sizeof(digit)", V(6), None),
    ("long_.digit_bits", "PyLong_SHIFT", V(6), None),
    ("float_.ob_fval", "offsetof(PyFloatObject, ob_fval)", V(6), None),
    ("tuple.ob_item", "offsetof(PyTupleObject, ob_item)", V(6), None),
    ("list.ob_item", "offsetof(PyListObject, ob_item)", V(6), None),
    ("cell.ob_ref", "offsetof(PyCellObject, ob_ref)", V(6), None),
    # dict
    ("dict.ma_used", "offsetof(PyDictObject, ma_used)", V(6), None),
    ("dict.ma_keys", "offsetof(PyDictObject, ma_keys)", V(6), None),
    ("dict.ma_values", "offsetof(PyDictObject, ma_values)", V(6), None),
    ("dict_keys.dk_size", "offsetof(PyDictKeysObject, dk_size)", V(6), V(11)),
    ("dict_keys.dk_log2_size", "offsetof(PyDictKeysObject, dk_log2_size)", V(11), None),
    ("dict_keys.dk_log2_index_bytes", "offsetof(PyDictKeysObject, dk_log2_index_bytes)", V(11), None),
    ("dict_keys.dk_kind", "offsetof(PyDictKeysObject, dk_kind)", V(11), None),
    ("dict_keys.dk_kind_general", "DICT_KEYS_GENERAL", V(11), None),
    ("dict_keys.dk_nentries", "offsetof(PyDictKeysObject, dk_nentries)", V(6), None),
    ("dict_keys.dk_indices", "offsetof(PyDictKeysObject, dk_indices)", V(6), None),
    ("dict_keys.entry_size", "sizeof(PyDictKeyEntry)", V(6), None),
    ("dict_keys.unicode_entry_size", "sizeof(PyDictUnicodeEntry)", V(11), None),
    ("dict_values.values", "offsetof(PyDictValues, values)", V(11), None),
    ("dict_values.valid", "offsetof(PyDictValues, valid)", V(13), None),
]

C_PRELUDE = r"""
#define Py_BUILD_CORE 1
#include <Python.h>
#include <frameobject.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#if PY_VERSION_HEX >= 0x03070000 && PY_VERSION_HEX < 0x03080000
#  include "internal/pystate.h"
#endif
#if PY_VERSION_HEX >= 0x03080000
#  include "internal/pycore_pystate.h"
#endif
#if PY_VERSION_HEX >= 0x03090000
#  include "internal/pycore_interp.h"
#  include "internal/pycore_runtime.h"
#endif
#if PY_VERSION_HEX >= 0x030B0000
#  include "internal/pycore_frame.h"
#  include "internal/pycore_dict.h"
#  include "internal/pycore_code.h"
#  include "internal/pycore_object.h"
#endif
#if PY_VERSION_HEX < 0x030B0000
#  include "dict-common.h"
#endif

enum { KIND, COMPACT, ASCII, READY };

/* Byte distance from an object to what an accessor returns for it (built with NDEBUG, so the
   accessors only do their pointer arithmetic). */
static char probe_buffer[512];
#define PROBE_OBJECT ((PyObject *)(probe_buffer + 256))
#define PROBE_DELTA(accessor) ((char *)accessor(PROBE_OBJECT) - (char *)PROBE_OBJECT)

/* Bit position of one PEP 393 state bitfield, found by setting it in a zeroed object. */
static int state_bit_shift(int which) {
    PyASCIIObject o;
    unsigned int bits = 0;
    memset(&o, 0, sizeof o);
    switch (which) {
        case KIND: o.state.kind = 1; break;
        case COMPACT: o.state.compact = 1; break;
        case ASCII: o.state.ascii = 1; break;
#if PY_VERSION_HEX < 0x030C0000
        case READY: o.state.ready = 1; break;
#endif
    }
    memcpy(&bits, (char *)&o + offsetof(PyASCIIObject, state), sizeof bits);
    for (int i = 0; i < 32; i++) if (bits == (1u << i)) return i;
    return -2;
}

int main(void) {
    printf("version=%s\n", PY_VERSION);
"""


def applies(field, version):
    _, _, since, until = field
    return version >= since and (until is None or version < until)


def measure(include_dir, version, mirror, tag, workdir):
    """Compiles and runs the probe against one header directory; returns {field: int}."""
    lines = [C_PRELUDE]
    for field in FIELDS:
        if applies(field, version):
            lines.append(f'    printf("{field[0]}=%ld\\n", (long)({field[1]}));')
    lines.append("    return 0;\n}\n")
    source = os.path.join(workdir, "probe.c")
    with open(source, "w") as f:
        f.write("\n".join(lines))
    extra_includes = []
    if version < (3, 11):
        # dict-common.h is private to Objects/ before 3.11: take it from the sources at `tag`.
        text = subprocess.run(["git", "-C", mirror, "show", f"{tag}:Objects/dict-common.h"], check=True,
                              capture_output=True, text=True).stdout
        with open(os.path.join(workdir, "dict-common.h"), "w") as f:
            f.write(text)
        extra_includes = ["-I", workdir]
    binary = os.path.join(workdir, "probe")
    if version >= (3, 14):
        # 3.14 moved _PyInterpreterFrame into its own header and made f_executable a _PyStackRef.
        with open(source) as f:
            text = f.read().replace('#  include "internal/pycore_frame.h"',
                                    '#  include "internal/pycore_frame.h"\n#  include "internal/pycore_interpframe.h"')
        with open(source, "w") as f:
            f.write(text)
    subprocess.run(["gcc", "-std=gnu11", "-Werror=implicit-function-declaration", "-DNDEBUG", "-I", include_dir, *extra_includes, source, "-o", binary], check=True)
    out = subprocess.run([binary], check=True, capture_output=True, text=True).stdout
    values = {}
    for line in out.splitlines():
        key, value = line.split("=", 1)
        values[key] = value if key == "version" else int(value)
    return values


def include_dir_of(prefix):
    found = sorted(glob.glob(os.path.join(prefix, "include", "python3.*")))
    if not found:
        raise SystemExit(f"gen_layouts: no include/python3.* under {prefix}")
    return found[0]


def emit(tables, output, free_threaded=False):
    regenerate = ("scripts/gen_layouts.py --free-threaded <3.13t prefix> --free-threaded <3.14t prefix>"
                  if free_threaded else
                  "scripts/gen_layouts.py --cpython-git <mirror> --check-headers /usr/include/python3.11")
    out = ["// Generated by scripts/gen_layouts.py from the CPython headers of each version: do not edit.",
           f"// Regenerate: {regenerate}",
           "// (see the script's docstring).",
           '#include "layout/layout_tables.h"',
           "",
           "namespace pyframes {",
           ""]
    suffix = "t" if free_threaded else ""
    array = "kFreeThreadedLayouts" if free_threaded else "kGeneratedLayouts"
    for version, values in tables:
        minor = version[1]
        out.append(f"// CPython {values['version']}{' (free-threaded)' if free_threaded else ''}")
        out.append(f"static void fill_3_{minor}{suffix}(Layout& l) {{")
        for key in sorted(k for k in values if k != "version"):
            out.append(f"  l.{key} = {values[key]};")
        out.append("}")
        out.append("")
    out.append(f"const GeneratedLayout {array}[] = {{")
    for version, values in tables:
        micro = values["version"].split(".")[2]
        micro = int(re.match(r"\d+", micro).group(0))
        out.append(f"    {{3, {version[1]}, {micro}, &fill_3_{version[1]}{suffix}}},")
    out.append("};")
    count = "kFreeThreadedLayoutCount" if free_threaded else "kGeneratedLayoutCount"
    out.append(f"const size_t {count} = sizeof({array}) / sizeof({array}[0]);")
    out.append("")
    out.append("}  // namespace pyframes")
    with open(output, "w") as f:
        f.write("\n".join(out) + "\n")


def free_threaded_tables(prefixes, output):
    """One table per free-threaded minor version, from each build's own headers."""
    tables = []
    with tempfile.TemporaryDirectory() as workdir:
        for prefix in prefixes:
            include_dir = include_dir_of(prefix)
            minor = re.search(r"python3\.(\d+)t$", include_dir)
            if not minor:
                raise SystemExit(f"gen_layouts: {include_dir} is not a free-threaded build's (python3.Xt)")
            version = (3, int(minor.group(1)))
            values = measure(include_dir, version, None, None, workdir)
            print(f"gen_layouts: {values['version']} (free-threaded): {len(values) - 1} fields", file=sys.stderr)
            tables.append((version, values))
    tables.sort()
    emit(tables, output, free_threaded=True)
    print(f"gen_layouts: wrote {os.path.normpath(output)}", file=sys.stderr)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cpython-git", help="git dir of a CPython mirror with release tags")
    parser.add_argument("--free-threaded", action="append", default=[], metavar="PREFIX",
                        help="install prefix of a free-threaded build: write the free-threaded tables")
    parser.add_argument("--pyenv", default="/root/.pyenv/versions", help="directory of pyenv versions")
    parser.add_argument("--check-headers", action="append", default=[],
                        help="another include dir whose numbers must equal its minor version's table")
    parser.add_argument("--output")
    args = parser.parse_args()
    layout_dir = os.path.join(here, "..", "pyframes", "src", "layout")
    if args.free_threaded:
        free_threaded_tables(args.free_threaded, args.output or os.path.join(layout_dir,
                                                                             "layout_tables_free_threaded.cpp"))
        return
    if not args.cpython_git:
        parser.error("--cpython-git is required for the default build's tables")
    args.output = args.output or os.path.join(layout_dir, "layout_tables_generated.cpp")

    tables = []
    with tempfile.TemporaryDirectory() as workdir:
        for prefix in sorted(glob.glob(os.path.join(args.pyenv, "3.*")), key=lambda p: [int(x) for x in
                                                                                    os.path.basename(p).split(".")]):
            full = os.path.basename(prefix)
            version = tuple(int(x) for x in full.split(".")[:2])
            if version < (3, 6):
                continue
            values = measure(include_dir_of(prefix), version, args.cpython_git, f"v{full}", workdir)
            print(f"gen_layouts: {values['version']}: {len(values) - 1} fields", file=sys.stderr)
            tables.append((version, values))
        by_version = dict(tables)
        for include_dir in args.check_headers:
            minor = re.search(r"python3\.(\d+)", include_dir)
            version = (3, int(minor.group(1)))
            values = measure(include_dir, version, args.cpython_git, None, workdir)
            reference = by_version.get(version)
            if reference is None:
                raise SystemExit(f"gen_layouts: no pyenv table for {version} to check {include_dir} against")
            diff = [k for k in reference if k != "version" and reference[k] != values.get(k)]
            if diff:
                raise SystemExit(f"gen_layouts: {include_dir} ({values['version']}) differs from "
                                 f"{reference['version']} in {diff}: one table per minor version is not enough")
            print(f"gen_layouts: {include_dir} ({values['version']}) matches {reference['version']}", file=sys.stderr)
    emit(tables, args.output)
    print(f"gen_layouts: wrote {os.path.normpath(args.output)}", file=sys.stderr)


if __name__ == "__main__":
    main()
