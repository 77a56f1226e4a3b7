#include "layout/newer_layout_check.h"

#include <fmt/format.h>

#include <initializer_list>
#include <string_view>

namespace pyframes {

namespace {

constexpr int kMaxThreadsChecked = 64;
constexpr int kMaxFramesChecked = 64;

struct Field {
  const char* name;
  int offset;
  bool pointer;  // a pointer field must be 8-aligned
};

// The section is `size` bytes and every field of it lies inside (a flexible array member, as
// the frame's localsplus or the code's bytecode, may start at the very end).
std::optional<std::string> section_problem(const char* section, int size, int min_size, int max_size,
                                           std::initializer_list<Field> fields, std::initializer_list<Field> tails = {}) {
  if (size < min_size || size > max_size) {
    return fmt::format("its {} size {} is not between {} and {}", section, size, min_size, max_size);
  }
  auto bad = [&](const Field& f, int limit) -> std::optional<std::string> {
    if (f.offset < 0 || f.offset > limit) {
      return fmt::format("{}.{} at {} is outside the {} bytes of its section", section, f.name, f.offset, size);
    }
    if (f.pointer && f.offset % 8 != 0) return fmt::format("{}.{} at {} is not 8-aligned", section, f.name, f.offset);
    return std::nullopt;
  };
  for (const Field& f : fields) {
    if (auto problem = bad(f, size - (f.pointer ? 8 : 4))) return problem;
  }
  for (const Field& f : tails) {
    if (auto problem = bad(f, size)) return problem;
  }
  return std::nullopt;
}

std::optional<std::string> table_problem(const Layout& l) {
  const auto& in = l.interpreter;
  if (auto p = section_problem("interpreter_state", in.size, 64, 1 << 24,
                               {{"id", in.id, false},
                                {"next", in.next, true},
                                {"threads_head", in.tstate_head, true},
                                {"modules", in.modules, true},
                                {"sysdict", in.sysdict, true},
                                {"builtins", in.builtins, true}})) {
    return p;
  }
  const auto& ts = l.thread_state;
  if (auto p = section_problem("thread_state", ts.size, 64, 1 << 20,
                               {{"prev", ts.prev, true},
                                {"next", ts.next, true},
                                {"interp", ts.interp, true},
                                {"current_frame", ts.frame, true},
                                {"thread_id", ts.thread_id, true},
                                {"native_thread_id", ts.native_thread_id, false}})) {
    return p;
  }
  const auto& fr = l.interpreter_frame;
  if (auto p = section_problem("interpreter_frame", fr.size, 32, 4096,
                               {{"previous", fr.previous, true},
                                {"executable", fr.executable, true},
                                {"instr_ptr", fr.instr_ptr, true},
                                {"owner", fr.owner, false}},
                               {{"localsplus", fr.localsplus, true}})) {
    return p;
  }
  const auto& co = l.code;
  return section_problem("code_object", co.size, 64, 4096,
                         {{"filename", co.filename, true},
                          {"name", co.name, true},
                          {"qualname", co.qualname, true},
                          {"linetable", co.linetable, true},
                          {"firstlineno", co.firstlineno, false},
                          {"argcount", co.argcount, false},
                          {"localsplusnames", co.localsplusnames, true},
                          {"localspluskinds", co.localspluskinds, true}},
                         {{"co_code_adaptive", co.code_adaptive, false}});
}

uint64_t at(uint64_t base, int offset) { return base + static_cast<uint64_t>(offset); }

// The tp_name of `object`'s type, up to 16 bytes ("" when unreadable).
std::string type_name(const Memory& memory, const Layout& l, uint64_t object) {
  auto type = memory.read_pointer(at(object, l.object.ob_type));
  if (!type || *type == 0 || (*type & 7) != 0) return {};
  auto name_address = memory.read_pointer(at(*type, l.type.tp_name));
  if (!name_address || *name_address == 0) return {};
  return memory.read_c_string(*name_address, 16).value_or("");
}

// Looks at up to kMaxFramesChecked frames of `tstate`: every executable is a code object (or
// None: the interpreter's own entry frames) and a code object's co_filename is a str.
std::optional<std::string> frames_problem(const Memory& memory, const Layout& l, uint64_t tstate,
                                          NewerLayoutEvidence& seen) {
  uint64_t frame = memory.read_pointer(at(tstate, l.thread_state.frame)).value_or(0);
  for (int n = 0; frame != 0 && n < kMaxFramesChecked; ++n) {
    if ((frame & 7) != 0) return fmt::format("a frame pointer {:#x} is not aligned", frame);
    auto executable = memory.read_pointer(at(frame, l.interpreter_frame.executable));
    if (!executable) return fmt::format("the frame at {:#x} cannot be read", frame);
    uint64_t object = *executable & ~l.stackref_tag_mask;
    if (object != 0) {
      std::string name = type_name(memory, l, object);
      if (name == "code") {
        auto filename = memory.read_pointer(at(object, l.code.filename));
        if (!filename || type_name(memory, l, *filename) != "str") {
          return fmt::format("the code object at {:#x} has no str file name at code_object.filename {}", object,
                             l.code.filename);
        }
        ++seen.code_objects;
      } else if (name != "NoneType") {
        return fmt::format("a frame's executable at interpreter_frame.executable {} is {} instead of a code object",
                           l.interpreter_frame.executable, name.empty() ? "unreadable" : "a " + name);
      }
    }
    frame = memory.read_pointer(at(frame, l.interpreter_frame.previous)).value_or(0);
  }
  return std::nullopt;
}

}  // namespace

Result<NewerLayoutEvidence> check_newer_layout(const Memory& memory, const PythonTarget& target, const Layout& l) {
  auto fail = [](std::string why) { return make_error(ErrorKind::UnsupportedVersion, std::move(why)); };
  if (auto problem = table_problem(l)) return fail(*problem);
  if (target.runtime_address == 0 || l.runtime.interpreters_head < 0) return fail("its runtime was not located");
  auto interp = memory.read_pointer(at(target.runtime_address, l.runtime.interpreters_head));
  if (!interp || *interp == 0 || (*interp & 7) != 0) {
    return fail("it has no interpreter at runtime_state.interpreters_head (not running yet, or finalising)");
  }
  uint64_t tstate = memory.read_pointer(at(*interp, l.interpreter.tstate_head)).value_or(0);
  if (tstate == 0 || (tstate & 7) != 0) return fail("its interpreter has no thread state at threads_head");
  NewerLayoutEvidence seen;
  for (; tstate != 0 && seen.threads < kMaxThreadsChecked; ++seen.threads) {
    if ((tstate & 7) != 0) return fail(fmt::format("a thread state pointer {:#x} is not aligned", tstate));
    auto owner = memory.read_pointer(at(tstate, l.thread_state.interp));
    if (!owner || *owner != *interp) {
      return fail(fmt::format("a thread state's interp (thread_state.interp {}) does not point back at its interpreter",
                              l.thread_state.interp));
    }
    if (auto problem = frames_problem(memory, l, tstate, seen)) return fail(*problem);
    tstate = memory.read_pointer(at(tstate, l.thread_state.next)).value_or(0);
  }
  if (seen.code_objects == 0) return fail("no thread runs Python code, so its frames could not be checked");
  return seen;
}

}  // namespace pyframes
