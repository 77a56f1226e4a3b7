// Picks the Layout for a located runtime: the generated table of its minor version, and for
// 3.13+ the target's own _Py_DebugOffsets on top. Model flags follow from the version.
#include <fmt/format.h>

#include "layout/debug_offsets.h"
#include "layout/layout_tables.h"
#include "layout/newer_layout_check.h"
#include "pyframes/layout.h"
#include "pyframes/pyframes.h"
#include "pyframes/versions.h"

namespace pyframes {

namespace {

struct Tables {
  const GeneratedLayout* begin;
  size_t count;
};

Tables tables_of(bool free_threaded) {
  return free_threaded ? Tables{kFreeThreadedLayouts, kFreeThreadedLayoutCount}
                       : Tables{kGeneratedLayouts, kGeneratedLayoutCount};
}

}  // namespace

const GeneratedLayout* find_generated_layout(int major, int minor, bool free_threaded) {
  Tables t = tables_of(free_threaded);
  for (size_t i = 0; i < t.count; ++i) {
    if (t.begin[i].major == major && t.begin[i].minor == minor) return &t.begin[i];
  }
  return nullptr;
}

namespace {

const GeneratedLayout* newest_generated_layout(bool free_threaded) {
  Tables t = tables_of(free_threaded);
  const GeneratedLayout* newest = nullptr;
  for (size_t i = 0; i < t.count; ++i) {
    if (newest == nullptr || t.begin[i].minor > newest->minor) newest = &t.begin[i];
  }
  return newest;
}

void set_model_flags(Layout& layout) {
  const PyVersion& v = layout.version;
  layout.frame_model = v.at_least(3, 11) ? FrameModel::InterpreterFrame : FrameModel::FrameObject;
  layout.line_table = v.at_least(3, 11)   ? LineTableFormat::Locations311
                      : v.at_least(3, 10) ? LineTableFormat::Linetable310
                                          : LineTableFormat::Lnotab;
  layout.lasti_in_code_units = v.at_least(3, 10);
  // 3.14 made f_executable a _PyStackRef whose low bit tags deferred references.
  layout.stackref_tag_mask = v.at_least(3, 14) ? 0x7 : 0;
}

// f_globals and f_builtins, which neither the generated tables nor _Py_DebugOffsets carry, from
// their fixed place next to a field that both carry (the structs in CPython's
// Include/frameobject.h (<= 3.10) and Include/internal/pycore_frame.h (3.11+)):
//   <= 3.10  PyFrameObject:       f_code, f_builtins, f_globals
//   3.11     _PyInterpreterFrame: f_func, f_globals, f_builtins, f_locals, f_code
//   3.12+    _PyInterpreterFrame: f_code/f_executable, previous, f_funcobj, f_globals, f_builtins
// Only --globals reads them; the dict reader validates what it finds there.
void set_namespace_offsets(Layout& layout) {
  constexpr int kPointer = 8;
  // tp_dict for versions read from _Py_DebugOffsets alone (3.14+): 12 pointers after tp_flags
  // (tp_doc ... tp_base come between), as every generated table measures it.
  if (layout.type.tp_dict < 0 && layout.type.tp_flags >= 0) layout.type.tp_dict = layout.type.tp_flags + 12 * kPointer;
  if (layout.frame_model == FrameModel::FrameObject) {
    if (layout.frame_object.code < 0) return;
    layout.frame_object.builtins = layout.frame_object.code + kPointer;
    layout.frame_object.globals = layout.frame_object.code + 2 * kPointer;
  } else if (!layout.version.at_least(3, 12)) {
    if (layout.interpreter_frame.executable < 3 * kPointer) return;
    layout.interpreter_frame.globals = layout.interpreter_frame.executable - 3 * kPointer;
    layout.interpreter_frame.builtins = layout.interpreter_frame.executable - 2 * kPointer;
  } else {
    if (layout.interpreter_frame.previous < 0) return;
    layout.interpreter_frame.globals = layout.interpreter_frame.previous + 2 * kPointer;
    layout.interpreter_frame.builtins = layout.interpreter_frame.previous + 3 * kPointer;
  }
}

std::string describe_version(const PythonTarget& target) {
  return target.version.major == 0 ? std::string("an unknown CPython version") : "CPython " + target.version.str();
}

// A version newer than every known one was read with the newest debug-offsets layout: keep it
// only when the target confirms it, and say so beside the stacks.
Result<void> confirm_newer_layout(const Memory& memory, const PythonTarget& target, Layout& layout) {
  auto evidence = check_newer_layout(memory, target, layout);
  if (!evidence) {
    return make_error(ErrorKind::UnsupportedVersion,
                      fmt::format("{} in {} ({}) is newer than pyframes knows, and its _Py_DebugOffsets do not read "
                                  "as 3.{}'s: {}",
                                  describe_version(target), memory.describe(), target.python_module,
                                  kNewestDebugOffsetsMinor, evidence.error().message),
                      "pyframes reads CPython " PYFRAMES_CPYTHON_OLDEST " to " PYFRAMES_CPYTHON_NEWEST
                      "; a newer pyframes may know this version");
  }
  layout.newer_version_note = fmt::format(
      "{} is newer than pyframes knows: read with 3.{}'s _Py_DebugOffsets layout, which the target confirmed "
      "({} thread states, {} code objects checked)",
      describe_version(target), kNewestDebugOffsetsMinor, evidence->threads, evidence->code_objects);
  return {};
}

}  // namespace

std::string missing_layout_fields(const Layout& l) {
  std::string missing;
  auto need = [&missing](int value, const char* name) {
    if (value < 0) missing += missing.empty() ? name : fmt::format(", {}", name);
  };
  need(l.interpreter.next, "interpreter.next");
  need(l.interpreter.tstate_head, "interpreter.tstate_head");
  need(l.thread_state.next, "thread_state.next");
  need(l.thread_state.interp, "thread_state.interp");
  need(l.thread_state.thread_id, "thread_state.thread_id");
  need(l.object.ob_type, "object.ob_type");
  need(l.object.ob_size, "object.ob_size");
  need(l.type.tp_name, "type.tp_name");
  need(l.code.filename, "code.filename");
  need(l.code.name, "code.name");
  need(l.code.firstlineno, "code.firstlineno");
  need(l.code.linetable, "code.linetable");
  need(l.unicode.length, "unicode.length");
  need(l.unicode.state, "unicode.state");
  need(l.unicode.ascii_size, "unicode.ascii_size");
  need(l.unicode.compact_size, "unicode.compact_size");
  need(l.unicode.kind_shift, "unicode.kind_shift");
  need(l.bytes.ob_sval, "bytes.ob_sval");
  if (l.version.at_least(3, 7)) need(l.runtime.interpreters_head, "runtime.interpreters_head");
  if (l.frame_model == FrameModel::FrameObject) {
    need(l.thread_state.frame, "thread_state.frame");
    need(l.frame_object.back, "frame_object.back");
    need(l.frame_object.code, "frame_object.code");
    need(l.frame_object.lasti, "frame_object.lasti");
  } else {
    if (l.thread_state.frame < 0) {
      need(l.thread_state.cframe, "thread_state.cframe");
      need(l.cframe.current_frame, "cframe.current_frame");
    }
    need(l.interpreter_frame.previous, "interpreter_frame.previous");
    need(l.interpreter_frame.executable, "interpreter_frame.executable");
    need(l.interpreter_frame.instr_ptr, "interpreter_frame.instr_ptr");
    need(l.interpreter_frame.owner, "interpreter_frame.owner");
    need(l.code.code_adaptive, "code.code_adaptive");
    need(l.code.qualname, "code.qualname");
    if (l.version.at_least(3, 12)) {
      need(l.interpreter_frame.owner_shim, "interpreter_frame.owner_shim");
    } else {
      need(l.interpreter_frame.is_entry, "interpreter_frame.is_entry");
    }
  }
  return missing;
}

Result<Layout> select_layout(const Memory& memory, const PythonTarget& target) {
  const PyVersion& version = target.version;
  if (version.major != 3 || version.minor < kOldestCPythonMinor) {
    return make_error(ErrorKind::UnsupportedVersion,
                      fmt::format("{} in {} ({}) is not supported", describe_version(target), memory.describe(),
                                  target.python_module),
                      "pyframes reads CPython " PYFRAMES_CPYTHON_OLDEST " to " PYFRAMES_CPYTHON_NEWEST);
  }
  Layout layout;
  layout.version = version;
  set_model_flags(layout);

  bool has_debug_offsets = version.at_least(3, 13) && target.runtime_address != 0 &&
                           read_debug_offsets_version(memory, target.runtime_address).has_value();
  // A free-threaded build's objects have a larger header, so every offset the debug table does
  // not carry comes from a free-threaded table, never from the default build's.
  bool free_threaded = has_debug_offsets && debug_offsets_free_threaded(memory, target.runtime_address);
  const GeneratedLayout* table = find_generated_layout(version.major, version.minor, free_threaded);
  const GeneratedLayout* newest = newest_generated_layout(free_threaded);
  if (table != nullptr) {
    table->fill(layout);
  } else if (has_debug_offsets && newest != nullptr) {
    // Newer than every table: the debug offsets carry everything the stack walk needs. Facts
    // they do not carry (dict-keys internals, PEP 393 bit positions, type flags) come from the
    // newest table; the object readers validate what they read, so a change there can only
    // cost thread names or locals, never stacks.
    newest->fill(layout);
    layout.code.firsttraceable = -1;  // not in the debug table, and PyCodeObject changes often
    layout.code.size = -1;
    layout.interpreter_frame.size = -1;
    layout.interpreter_frame.is_entry = -1;
  } else if (free_threaded) {
    return make_error(ErrorKind::UnsupportedVersion,
                      fmt::format("{} in {} ({}) is a free-threaded build pyframes has no table for",
                                  describe_version(target), memory.describe(), target.python_module),
                      "pyframes reads free-threaded CPython 3.13 and later");
  } else {
    return make_error(ErrorKind::UnsupportedVersion,
                      fmt::format("{} in {} ({}) is newer than pyframes knows and has no _Py_DebugOffsets",
                                  describe_version(target), memory.describe(), target.python_module),
                      "pyframes reads CPython " PYFRAMES_CPYTHON_OLDEST " to " PYFRAMES_CPYTHON_NEWEST);
  }
  if (has_debug_offsets) {
    int compact_extra = layout.unicode.compact_size - layout.unicode.ascii_size;
    PYFRAMES_CHECK(apply_debug_offsets(memory, target.runtime_address, layout));
    layout.unicode.compact_size = layout.unicode.ascii_size + compact_extra;
    layout.version = version;
    if (version.major == 3 && version.minor > kNewestDebugOffsetsMinor) {
      PYFRAMES_CHECK(confirm_newer_layout(memory, target, layout));
    }
  }
  std::string missing = missing_layout_fields(layout);
  if (!missing.empty()) {
    return make_error(ErrorKind::UnsupportedVersion,
                      fmt::format("the layout for {} lacks {}", describe_version(target), missing));
  }
  set_namespace_offsets(layout);
  return layout;
}

}  // namespace pyframes
