#include "walk/gil.h"

namespace pyframes {

namespace {

bool gil_off(const Memory& memory, const Layout& layout, uint64_t gil) noexcept {
  if (!layout.free_threaded || layout.gil.enabled < 0 || gil == 0) return false;
  int32_t enabled = 1;
  return memory.read(gil + static_cast<uint64_t>(layout.gil.enabled), &enabled, 4) == ReadStatus::Ok && enabled == 0;
}

uint64_t holder_of(const Memory& memory, const Layout& layout, uint64_t gil) noexcept {
  if (gil == 0 || layout.gil.locked < 0 || layout.gil.last_holder < 0) return 0;
  if (gil_off(memory, layout, gil)) return 0;  // its locked/last_holder are stale, not a holder
  int32_t locked = 0;
  uint64_t holder = 0;
  if (memory.read(gil + static_cast<uint64_t>(layout.gil.locked), &locked, 4) != ReadStatus::Ok ||
      memory.read(gil + static_cast<uint64_t>(layout.gil.last_holder), &holder, 8) != ReadStatus::Ok) {
    return 0;
  }
  return locked != 0 ? holder : 0;
}

}  // namespace

uint64_t gil_state_address(const Memory& memory, const Layout& layout, const PythonTarget& target,
                           uint64_t interp) noexcept {
  if (layout.interpreter.ceval_gil >= 0) {  // 3.12+: per interpreter
    uint64_t gil = 0;
    if (memory.read(interp + static_cast<uint64_t>(layout.interpreter.ceval_gil), &gil, 8) != ReadStatus::Ok) return 0;
    return gil;
  }
  if (target.runtime_address != 0 && layout.runtime.ceval_gil >= 0) {  // 3.7-3.11
    return target.runtime_address + static_cast<uint64_t>(layout.runtime.ceval_gil);
  }
  return 0;
}

uint64_t gil_holder(const Memory& memory, const Layout& layout, const PythonTarget& target, uint64_t interp) noexcept {
  if (layout.interpreter.ceval_gil >= 0 || (target.runtime_address != 0 && layout.runtime.ceval_gil >= 0)) {
    return holder_of(memory, layout, gil_state_address(memory, layout, target, interp));
  }
  if (target.runtime_address != 0 && layout.runtime.gilstate_tstate_current >= 0) {
    uint64_t current = 0;
    memory.read(target.runtime_address + static_cast<uint64_t>(layout.runtime.gilstate_tstate_current), &current, 8);
    return current;
  }
  if (target.tstate_current_address != 0) {  // 3.6
    uint64_t current = 0;
    memory.read(target.tstate_current_address, &current, 8);
    return current;
  }
  return 0;
}

bool gil_disabled(const Memory& memory, const Layout& layout, const PythonTarget& target, uint64_t interp) noexcept {
  return gil_off(memory, layout, gil_state_address(memory, layout, target, interp));
}

}  // namespace pyframes
