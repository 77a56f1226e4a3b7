// Layout tables: complete for every version, and right: each offset is checked from inside a
// live interpreter of that version (fixtures/check_layout_offsets.py finds, through ctypes,
// the objects the interpreter says are there), and the 3.13 table is compared with the
// _Py_DebugOffsets CPython itself ships in libpython3.13.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "discovery/version_detect.h"
#include "elf/elf_file.h"
#include "fake_target.h"
#include "file_memory.h"
#include "layout/debug_offsets.h"
#include "layout/layout_tables.h"
#include "pyframes/layout.h"
#include "pyframes/pyframes.h"
#include "python_process.h"

using namespace pyframes;
using test_support::NoMemory;

namespace {

Result<Layout> table_layout(int minor) {
  PythonTarget target;
  target.version = PyVersion{3, minor, -1, 0};
  NoMemory memory;
  return select_layout(memory, target);
}

#define LAYOUT_FIELDS(X)                                                                                        \
  X(runtime.interpreters_head) X(runtime.interpreters_main) X(runtime.gilstate_tstate_current)                  \
  X(runtime.ceval_gil) X(gil.locked) X(gil.last_holder) X(interpreter.next) X(interpreter.tstate_head)         \
  X(interpreter.modules) X(interpreter.sysdict) X(interpreter.ceval_gil) X(thread_state.interp)               \
  X(thread_state.frame) X(thread_state.cframe) X(thread_state.thread_id) X(thread_state.native_thread_id)      \
  X(cframe.current_frame) X(frame_object.back) X(frame_object.code) X(frame_object.lasti)                     \
  X(interpreter_frame.previous) X(interpreter_frame.executable) X(interpreter_frame.instr_ptr)                \
  X(code.filename) X(code.name) X(code.qualname) X(code.firstlineno) X(code.argcount) X(code.kwonlyargcount)   \
  X(code.flags) X(code.linetable) X(code.varnames) X(code.code) X(code.code_adaptive) X(object.ob_type)        \
  X(object.ob_size) X(type.tp_name) X(type.tp_flags) X(type.tp_basicsize) X(type.tp_dictoffset)               \
  X(type.managed_dict_offset) X(unicode.length) X(unicode.state) X(unicode.ascii_size) X(unicode.compact_size) \
  X(unicode.kind_shift) X(unicode.compact_shift) X(unicode.ascii_shift) X(bytes.ob_sval) X(long_.ob_digit)     \
  X(long_.lv_tag) X(long_.digit_size) X(long_.digit_bits) X(float_.ob_fval) X(tuple.ob_item) X(list.ob_item)   \
  X(cell.ob_ref) X(dict.ma_used) X(dict.ma_values)

std::string layout_json(const Layout& l) {
  std::string out = "{";
#define FIELD_JSON(name) out += fmt::format("\"{}\": {}, ", #name, l.name);
  LAYOUT_FIELDS(FIELD_JSON)
#undef FIELD_JSON
  out.resize(out.size() - 2);
  return out + "}";
}

// A free-threaded build's table, with the model flags its version implies (as select_layout
// sets them for a target whose debug offsets say free-threaded).
std::optional<Layout> free_threaded_table(int minor) {
  const GeneratedLayout* table = find_generated_layout(3, minor, true);
  if (table == nullptr) return std::nullopt;
  Layout layout;
  layout.version = PyVersion{3, minor, -1, 0};
  layout.frame_model = FrameModel::InterpreterFrame;
  layout.line_table = LineTableFormat::Locations311;
  layout.free_threaded = true;
  table->fill(layout);
  return layout;
}

bool is_free_threaded_python(const std::string& python) { return !python.empty() && python.back() == 't'; }

std::optional<int> minor_of(const std::string& python) {
  std::string installed = test_support::pyenv_version_of(python);
  if (!installed.empty()) return std::stoi(installed.substr(2));
  auto from_name = version_from_filename(python);
  if (from_name) return from_name->minor;
  return std::nullopt;
}

}  // namespace

TEST_CASE("every generated layout has every field its version needs") {
  REQUIRE(kGeneratedLayoutCount >= 8);
  for (size_t i = 0; i < kGeneratedLayoutCount; ++i) {
    CAPTURE(kGeneratedLayouts[i].minor);
    auto layout = table_layout(kGeneratedLayouts[i].minor);
    REQUIRE_MESSAGE(layout.ok(), layout.error().message);
    CHECK(missing_layout_fields(*layout).empty());
  }
  for (int minor = 6; minor <= 13; ++minor) CHECK(find_generated_layout(3, minor) != nullptr);
  REQUIRE(kFreeThreadedLayoutCount >= 2);
  for (size_t i = 0; i < kFreeThreadedLayoutCount; ++i) {
    CAPTURE(kFreeThreadedLayouts[i].minor);
    auto layout = free_threaded_table(kFreeThreadedLayouts[i].minor);
    REQUIRE(layout.has_value());
    CHECK(missing_layout_fields(*layout).empty());
    // The larger object header is what sets these builds apart: every object offset moves.
    CHECK(layout->object.ob_type > 8);
    CHECK(layout->type.managed_dict_offset == -8);
  }
  CHECK_FALSE(table_layout(5).ok());
  CHECK(table_layout(14).error().kind == ErrorKind::UnsupportedVersion);  // 3.14 needs the target's debug offsets
}

TEST_CASE("layout offsets find what each live interpreter reports") {
  auto pythons = test_support::test_pythons();
  if (pythons.empty()) {
    MESSAGE("no CPython interpreters found: skipped");
    return;
  }
  // Appended in place: GCC 12 warns (-Warray-bounds, a false positive) about the moved-from
  // temporary of `std::string(...) + "..."` where precompiled headers change its inlining.
  std::string script = HANGSHIM_SOURCE_DIR;
  script += "/tests/pyframes/unit/fixtures/check_layout_offsets.py";
  for (const auto& python : pythons) {
    CAPTURE(python);
    auto minor = minor_of(python);
    REQUIRE(minor.has_value());
    bool free_threaded = is_free_threaded_python(python);
    if (find_generated_layout(3, *minor, free_threaded) == nullptr) {
      MESSAGE("no generated table for 3." << *minor << " (read through its debug offsets): skipped");
      continue;
    }
    std::optional<Layout> layout;
    if (free_threaded) {
      layout = free_threaded_table(*minor);
    } else if (auto from_table = table_layout(*minor); from_table.ok()) {
      layout = *from_table;
    }
    REQUIRE(layout.has_value());
    test_support::PythonProcess checker(python, {script, layout_json(*layout)}, true);
    std::string output;
    while (auto line = checker.read_line(std::chrono::seconds(30))) output += *line + "\n";
    CAPTURE(output);
    CHECK(output.find("checked ") != std::string::npos);
    CHECK(std::count(output.begin(), output.end(), '\n') == 1);  // only the "checked N" line: no failure
  }
}

TEST_CASE("the 3.13 table equals the _Py_DebugOffsets shipped in libpython3.13") {
  const char* path = HANGSHIM_PYENV_VERSIONS "/3.13.0/lib/libpython3.13.so.1.0";
  if (!std::filesystem::exists(path)) {
    MESSAGE("no libpython3.13: skipped");
    return;
  }
  auto elf = ElfFile::open(path);
  REQUIRE(elf.ok());
  auto runtime = (*elf)->find_symbol("_PyRuntime");
  REQUIRE(runtime.has_value());
  FileMemory memory(**elf);  // _PyRuntime's debug offsets are initialised data in the file
  uint32_t shipped = read_debug_offsets_version(memory, runtime->value).value_or(0);
  REQUIRE((shipped >> 16) == 0x030Du);
  auto table = table_layout(13);
  REQUIRE(table.ok());
  Layout from_target = *table;
  auto applied = apply_debug_offsets(memory, runtime->value, from_target);
  REQUIRE(applied.ok());
#define FIELD_EQUAL(name) CHECK_MESSAGE(from_target.name == table->name, #name);
  LAYOUT_FIELDS(FIELD_EQUAL)
#undef FIELD_EQUAL
  CHECK(from_target.interpreter_frame.owner == table->interpreter_frame.owner);
  CHECK(from_target.interpreter_frame.localsplus == table->interpreter_frame.localsplus);
  CHECK(from_target.code.localsplusnames == table->code.localsplusnames);
  CHECK(from_target.code.localspluskinds == table->code.localspluskinds);
  CHECK(from_target.dict.ma_keys == table->dict.ma_keys);
}

TEST_CASE("each free-threaded table equals the _Py_DebugOffsets its libpython ships") {
  size_t checked = 0;
  for (const auto& python : test_support::test_pythons()) {
    if (!is_free_threaded_python(python)) continue;
    auto minor = minor_of(python);
    REQUIRE(minor.has_value());
    std::filesystem::path lib = std::filesystem::path(python).parent_path().parent_path() / "lib" /
                                fmt::format("libpython3.{}t.so.1.0", *minor);
    CAPTURE(lib.string());
    if (!std::filesystem::exists(lib)) {
      MESSAGE("no shared libpython beside " << python << ": skipped");
      continue;
    }
    auto elf = ElfFile::open(lib.string());
    REQUIRE(elf.ok());
    auto runtime = (*elf)->find_symbol("_PyRuntime");
    REQUIRE(runtime.has_value());
    FileMemory memory(**elf);
    REQUIRE(debug_offsets_free_threaded(memory, runtime->value));
    auto table = free_threaded_table(*minor);
    REQUIRE(table.has_value());
    Layout from_target = *table;
    auto applied = apply_debug_offsets(memory, runtime->value, from_target);
    REQUIRE(applied.ok());
    CHECK(from_target.free_threaded);
#define FIELD_EQUAL(name) CHECK_MESSAGE(from_target.name == table->name, #name);
    LAYOUT_FIELDS(FIELD_EQUAL)
#undef FIELD_EQUAL
    CHECK(from_target.gil.enabled == 0);  // the first field of struct _gil_runtime_state
    if (*minor >= 14) {
      CHECK(from_target.interpreter_frame.tlbc_index > 0);
      CHECK(from_target.code.tlbc > 0);
    }
    ++checked;
  }
  if (checked == 0) MESSAGE("no free-threaded interpreter among the test interpreters: skipped");
}
