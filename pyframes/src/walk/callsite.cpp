#include "pyframes/callsite.h"

#include "objects/object_reader.h"
#include "walk/code_info.h"
#include "walk/frame_chain.h"
#include "walk/interpreters.h"
#include "walk/own_frames_memory.h"

namespace pyframes {

namespace {
template <class Mem>
size_t collect(const Mem& memory, const Layout& layout, uint64_t tstate, CodeLocation* out, size_t capacity,
               CodeTypeCheck& code_check, uint64_t* walk_end = nullptr) noexcept {
  if (walk_end != nullptr) *walk_end = kWalkEndedEarly;
  if (out == nullptr || capacity == 0 || tstate == 0) return 0;
  size_t count = 0;
  uint64_t last = 0;
  WalkStop stop = walk_frames(memory, layout, tstate, capacity, code_check, [&](const RawFrame& raw) {
    out[count].code_object = raw.code;
    out[count].instruction_offset = raw.instruction_offset;
    last = raw.frame;
    return ++count < capacity;
  });
  if (walk_end != nullptr && (stop == WalkStop::End || stop == WalkStop::Stopped)) {
    *walk_end = stop == WalkStop::End ? 0 : last;
  }
  return count;
}
}  // namespace

size_t collect_code_locations(const Memory& memory, const Layout& layout, uint64_t tstate, CodeLocation* out,
                              size_t capacity) noexcept {
  CodeTypeCheck code_check;
  return collect(memory, layout, tstate, out, capacity, code_check);
}

size_t collect_own_code_locations(const SelfMemory& memory, const Layout& layout, uint64_t tstate,
                                  CodeLocation* out, size_t capacity, uint64_t* walk_end) noexcept {
  if (memory.mode() != SelfMemory::Mode::Table) {
    CodeTypeCheck code_check;
    return collect<Memory>(memory, layout, tstate, out, capacity, code_check, walk_end);
  }
  OwnFramesMemory own(memory);
  CodeTypeCheck code_check(own.known_code_type());
  size_t count = collect(own, layout, tstate, out, capacity, code_check, walk_end);
  own.remember_code_type(code_check.code_type());
  return count;
}

Result<Frame> describe_code_location(const Memory& memory, const Layout& layout, CodeLocation location) {
  CodeTypeCheck code_check;
  if (!code_check.is_code(memory, layout, location.code_object)) {
    return make_error(ErrorKind::Corrupt, "not a code object");
  }
  ObjectReader reader(memory, layout);
  PYFRAMES_TRY(info, read_code_info(reader, location.code_object));
  Frame frame;
  frame.function = info.name;
  frame.qualname = info.qualname;
  frame.file = info.filename;
  frame.line = code_line(info, layout, location.instruction_offset);
  return frame;
}

size_t list_thread_states(const Memory& memory, const Layout& layout, const PythonTarget& target,
                          ThreadStateRef* out, size_t capacity) noexcept {
  if (out == nullptr || capacity == 0) return 0;
  size_t count = 0;
  for_each_interpreter(memory, layout, target, [&](uint64_t interp) {
    for_each_thread_state(memory, layout, interp, [&](uint64_t tstate) {
      uint64_t thread_id = 0;
      memory.read(tstate + static_cast<uint64_t>(layout.thread_state.thread_id), &thread_id, 8);
      out[count++] = ThreadStateRef{tstate, thread_id};
      return count < capacity;
    });
    return count < capacity;
  });
  return count;
}

uint64_t find_thread_state(const Memory& memory, const Layout& layout, const PythonTarget& target,
                           uint64_t thread_id) noexcept {
  uint64_t found = 0;
  for_each_interpreter(memory, layout, target, [&](uint64_t interp) {
    for_each_thread_state(memory, layout, interp, [&](uint64_t tstate) {
      uint64_t id = 0;
      if (memory.read(tstate + static_cast<uint64_t>(layout.thread_state.thread_id), &id, 8) == ReadStatus::Ok &&
          id == thread_id) {
        found = tstate;
      }
      return found == 0;
    });
    return found == 0;
  });
  return found;
}

}  // namespace pyframes
