// Interpreters and their thread states: _PyRuntime.interpreters.head (3.7+) or interp_head
// (3.6), then each interpreter's thread list. Allocation-free and bounded like the frame walk,
// so the shim can use it to find a thread's state by its thread id.
#pragma once

#include <cstdint>

#include "pyframes/layout.h"
#include "pyframes/memory.h"
#include "pyframes/target.h"
#include "walk/frame_chain.h"

namespace pyframes {

inline constexpr size_t kMaxInterpreters = 256;
inline constexpr size_t kMaxThreadsPerInterpreter = 16384;

// The first interpreter (0 when Python is not initialised or finalising).
inline ReadStatus first_interpreter(const Memory& memory, const Layout& layout, const PythonTarget& target,
                                    uint64_t* interp) noexcept {
  *interp = 0;
  if (target.runtime_address != 0 && layout.runtime.interpreters_head >= 0) {
    return memory.read(target.runtime_address + static_cast<uint64_t>(layout.runtime.interpreters_head), interp, 8);
  }
  if (target.interp_head_address != 0) return memory.read(target.interp_head_address, interp, 8);
  return ReadStatus::Unmapped;
}

enum class ListStop : uint8_t { End, Limit, Cycle, Unreadable, Stopped };

// Calls visit(uint64_t interp) -> bool for each interpreter.
template <class Visitor>
ListStop for_each_interpreter(const Memory& memory, const Layout& layout, const PythonTarget& target,
                              Visitor&& visit) noexcept {
  uint64_t interp = 0;
  if (first_interpreter(memory, layout, target, &interp) != ReadStatus::Ok) return ListStop::Unreadable;
  CycleDetector cycle;
  for (size_t n = 0; interp != 0; ++n) {
    if ((interp & 7) != 0) return ListStop::Unreadable;
    if (cycle.seen_again(interp)) return ListStop::Cycle;
    if (n >= kMaxInterpreters) return ListStop::Limit;
    if (!visit(interp)) return ListStop::Stopped;
    if (memory.read(interp + static_cast<uint64_t>(layout.interpreter.next), &interp, 8) != ReadStatus::Ok) {
      return ListStop::Unreadable;
    }
  }
  return ListStop::End;
}

// Calls visit(uint64_t tstate) -> bool for each thread state of `interp`, newest first.
template <class Visitor>
ListStop for_each_thread_state(const Memory& memory, const Layout& layout, uint64_t interp, Visitor&& visit) noexcept {
  uint64_t tstate = 0;
  if (memory.read(interp + static_cast<uint64_t>(layout.interpreter.tstate_head), &tstate, 8) != ReadStatus::Ok) {
    return ListStop::Unreadable;
  }
  CycleDetector cycle;
  for (size_t n = 0; tstate != 0; ++n) {
    if ((tstate & 7) != 0) return ListStop::Unreadable;
    if (cycle.seen_again(tstate)) return ListStop::Cycle;
    if (n >= kMaxThreadsPerInterpreter) return ListStop::Limit;
    // A thread state that does not point back at its interpreter is not one.
    uint64_t owner = 0;
    if (memory.read(tstate + static_cast<uint64_t>(layout.thread_state.interp), &owner, 8) != ReadStatus::Ok ||
        owner != interp) {
      return ListStop::Unreadable;
    }
    if (!visit(tstate)) return ListStop::Stopped;
    if (memory.read(tstate + static_cast<uint64_t>(layout.thread_state.next), &tstate, 8) != ReadStatus::Ok) {
      return ListStop::Unreadable;
    }
  }
  return ListStop::End;
}

}  // namespace pyframes
