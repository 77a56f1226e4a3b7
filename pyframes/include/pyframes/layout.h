// Everything version-specific the walker and the object readers need about one CPython: a few
// model flags (how frames and line tables work) and plain byte offsets. Offsets are data:
// 3.6-3.12 from tables generated out of each version's headers (scripts/gen_layouts.py),
// 3.13+ from the target's own _Py_DebugOffsets. -1 means "this version has no such field".
#pragma once

#include <cstdint>
#include <string>

#include "pyframes/model.h"
#include "pyframes/target.h"

namespace pyframes {

// How a thread's Python frames are linked.
enum class FrameModel : uint8_t {
  FrameObject,        // <= 3.10: PyFrameObject chain through f_back, f_lasti in the frame
  InterpreterFrame,   // 3.11+: _PyInterpreterFrame chain through `previous`
};

// How a code object maps instruction offsets to lines.
enum class LineTableFormat : uint8_t {
  Lnotab,         // <= 3.9: co_lnotab (byte offset, line) increments
  Linetable310,   // 3.10: co_linetable (byte delta, line delta) pairs, -128 = no line
  Locations311,   // 3.11+: co_linetable location entries (PEP 657)
};

struct Layout {
  PyVersion version;  // of the target
  FrameModel frame_model = FrameModel::FrameObject;
  LineTableFormat line_table = LineTableFormat::Lnotab;
  bool from_debug_offsets = false;  // offsets came (partly) from the target's _Py_DebugOffsets
  // Set when the target is newer than every layout pyframes knows and was read with the newest
  // one after checking it against the target (select_layout.cpp): the note shown with the stacks.
  std::string newer_version_note;
  // The f_lasti of <= 3.10 frames counts code units (2 bytes) from 3.10 on, bytes before.
  bool lasti_in_code_units = false;
  // 3.14 tags the low bits of _PyStackRef fields (f_executable, localsplus): mask them off.
  uint64_t stackref_tag_mask = 0;
  // A free-threaded build (--disable-gil, python3.13t/3.14t), as its _Py_DebugOffsets say: a
  // larger object header (the offsets below are its own), per-thread bytecode copies (3.14+),
  // and a GIL that is normally off.
  bool free_threaded = false;

  struct Runtime {
    int size = -1;
    int interpreters_head = -1;
    int interpreters_main = -1;        // the main interpreter (only used to validate a data scan)
    int gilstate_tstate_current = -1;  // 3.7-3.11: the thread state holding the GIL
    int ceval_gil = -1;                // 3.7-3.11: struct _gil_runtime_state inside _PyRuntime
    int gc = -1;                       // 3.7, 3.8: struct _gc_runtime_state inside _PyRuntime
  } runtime;

  struct Gc {  // struct _gc_runtime_state (3.7+; 3.6 keeps it in statics of gcmodule.c)
    int collecting = -1;  // int: a collection is running
  } gc;

  struct Gil {  // struct _gil_runtime_state
    int locked = -1;
    int last_holder = -1;
    int enabled = -1;  // free-threaded builds: 0 while the GIL is off (the usual case)
  } gil;

  struct Interpreter {
    int size = -1;
    int next = -1;
    int id = -1;
    int tstate_head = -1;
    int modules = -1;  // sys.modules
    int sysdict = -1;
    int builtins = -1;
    int ceval_gil = -1;  // 3.12+: pointer to the interpreter's struct _gil_runtime_state
    int gc = -1;         // 3.9+: struct _gc_runtime_state inside the interpreter
  } interpreter;

  struct ThreadState {
    int size = -1;
    int prev = -1;
    int next = -1;
    int interp = -1;
    int frame = -1;   // <= 3.10: PyFrameObject*; 3.13+: _PyInterpreterFrame* (current_frame)
    int cframe = -1;  // 3.11, 3.12: _PyCFrame*, whose current_frame is the innermost frame
    int thread_id = -1;
    int native_thread_id = -1;  // 3.11+
  } thread_state;

  struct CFrame {
    int current_frame = -1;
  } cframe;

  struct FrameObject {  // PyFrameObject, <= 3.10
    int size = -1;
    int back = -1;
    int code = -1;
    int lasti = -1;
    int lineno = -1;
    int localsplus = -1;
    int globals = -1;   // f_globals, f_builtins: not in the generated tables (see select_layout.cpp)
    int builtins = -1;
  } frame_object;

  struct InterpreterFrame {  // _PyInterpreterFrame, 3.11+
    int size = -1;
    int previous = -1;
    int executable = -1;  // f_code (3.11, 3.12), f_executable (3.13+)
    int instr_ptr = -1;   // prev_instr (3.11, 3.12: last instruction), instr_ptr (3.13+: current)
    int localsplus = -1;
    int owner = -1;
    int is_entry = -1;          // 3.11 only
    int owner_generator = -1;   // FRAME_OWNED_BY_GENERATOR
    int owner_shim = -1;        // 3.12+: owners >= this are not Python frames (C-stack shims)
    int tlbc_index = -1;        // 3.14+ free-threaded: which of the code's bytecode copies runs
    int globals = -1;           // f_globals, f_builtins: not in _Py_DebugOffsets (see select_layout.cpp)
    int builtins = -1;
  } interpreter_frame;

  struct Code {  // PyCodeObject
    int size = -1;
    int argcount = -1;
    int posonlyargcount = -1;
    int kwonlyargcount = -1;
    int nlocals = -1;
    int flags = -1;
    int firstlineno = -1;
    int code = -1;  // <= 3.10: co_code (bytes)
    int varnames = -1;
    int cellvars = -1;
    int freevars = -1;
    int filename = -1;
    int name = -1;
    int qualname = -1;   // 3.11+
    int linetable = -1;  // co_lnotab (<= 3.9) or co_linetable (3.10+)
    int localsplusnames = -1;
    int localspluskinds = -1;
    int nlocalsplus = -1;
    int firsttraceable = -1;
    int code_adaptive = -1;  // 3.11+: the bytecode, inline in the code object
    int tlbc = -1;           // 3.14+ free-threaded: co_tlbc, the per-thread bytecode copies
  } code;

  struct Object {
    int ob_type = -1;
    int ob_size = -1;
  } object;

  struct Type {
    int tp_name = -1;
    int tp_basicsize = -1;
    int tp_flags = -1;
    int tp_dictoffset = -1;
    // The type's own dict (a heap type's __module__ is there). Not in _Py_DebugOffsets: for 3.14+
    // it is taken 96 bytes after tp_flags, as in every generated table (PyTypeObject's public
    // fields from tp_flags to tp_dict have not changed in Python 3).
    int tp_dict = -1;
    int ht_cached_keys = -1;
    int flag_managed_dict = -1;   // Py_TPFLAGS_MANAGED_DICT value (3.11+)
    // Managed dicts (3.11+) live before the object: offset (negative) of the dict pointer
    // (3.12: of the tagged dict-or-values word), and in 3.11 of the values pointer.
    int managed_dict_offset = 0;
    int managed_values_offset = 0;
    int flag_inline_values = -1;  // Py_TPFLAGS_INLINE_VALUES value (3.13+)
  } type;

  struct Unicode {  // PEP 393 str
    int length = -1;
    int state = -1;
    int ascii_size = -1;    // sizeof(PyASCIIObject): compact ASCII data follows
    int compact_size = -1;  // sizeof(PyCompactUnicodeObject): compact non-ASCII data follows
    int data_any = -1;      // PyUnicodeObject.data: legacy (non-compact) strings
    int kind_shift = -1;    // bit positions inside `state`
    int compact_shift = -1;
    int ascii_shift = -1;
    int ready_shift = -1;   // <= 3.11
  } unicode;

  struct Bytes {
    int ob_sval = -1;
  } bytes;

  struct Long {
    int ob_digit = -1;
    int lv_tag = -1;  // 3.12+: digit count and sign in one tag; before: sign and count in ob_size
    int digit_size = -1;
    int digit_bits = -1;
  } long_;

  struct Float {
    int ob_fval = -1;
  } float_;

  struct Tuple {
    int ob_item = -1;
  } tuple;

  struct List {
    int ob_item = -1;
  } list;

  struct Cell {
    int ob_ref = -1;
  } cell;

  struct Dict {
    int ma_used = -1;
    int ma_keys = -1;
    int ma_values = -1;
  } dict;

  struct DictKeys {
    int dk_size = -1;              // <= 3.10
    int dk_log2_size = -1;         // 3.11+
    int dk_log2_index_bytes = -1;  // 3.11+
    int dk_kind = -1;              // 3.11+
    int dk_kind_general = -1;      // DICT_KEYS_GENERAL: entries carry a hash
    int dk_nentries = -1;
    int dk_indices = -1;
    int entry_size = -1;           // sizeof(PyDictKeyEntry) {hash, key, value}
    int unicode_entry_size = -1;   // sizeof(PyDictUnicodeEntry) {key, value}, 3.11+
  } dict_keys;

  struct DictValues {
    int values = -1;  // offset of values[] in PyDictValues (3.11+)
    int valid = -1;   // 3.13+: inline values still hold the attributes
  } dict_values;
};

// PyCFunctionObject (a builtin_function_or_method): the object header, then m_ml (PyMethodDef*,
// whose first field is ml_name), then m_self. Not a field of the generated tables: part of
// CPython's public headers and unchanged from 3.6 to 3.15, so it follows from where the header
// ends (ob_type is its last field: 8 + 8, or 24 + 8 in a free-threaded build). -1 when unknown.
inline int cfunction_m_ml(const Layout& layout) { return layout.object.ob_type < 0 ? -1 : layout.object.ob_type + 8; }
inline int cfunction_m_self(const Layout& layout) {
  return layout.object.ob_type < 0 ? -1 : layout.object.ob_type + 16;
}

// What a process read with `layout` tells readers of its raw memory (Process::object_offsets).
inline ObjectOffsets object_offsets(const Layout& layout) {
  return ObjectOffsets{layout.object.ob_type, layout.type.tp_name, cfunction_m_self(layout)};
}

// Checks that every field the walker needs for `layout.version` is present; the error names
// the missing ones. select_layout runs this on every layout it returns.
std::string missing_layout_fields(const Layout& layout);

}  // namespace pyframes
