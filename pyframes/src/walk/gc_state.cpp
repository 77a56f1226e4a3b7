#include "walk/gc_state.h"

namespace pyframes {

std::optional<bool> gc_collecting(const Memory& memory, const Layout& layout, const PythonTarget& target,
                                  uint64_t interp) noexcept {
  if (layout.gc.collecting < 0) return std::nullopt;
  uint64_t state = 0;
  if (layout.interpreter.gc >= 0) {
    // A layout read from a newer CPython's debug offsets is checked section by section elsewhere;
    // this field is checked here: it must lie inside the interpreter.
    if (interp == 0 || (layout.interpreter.size > 0 && layout.interpreter.gc >= layout.interpreter.size)) {
      return std::nullopt;
    }
    state = interp + static_cast<uint64_t>(layout.interpreter.gc);
  } else if (layout.runtime.gc >= 0 && target.runtime_address != 0) {
    state = target.runtime_address + static_cast<uint64_t>(layout.runtime.gc);
  } else {
    return std::nullopt;
  }
  auto collecting = memory.read_value<int32_t>(state + static_cast<uint64_t>(layout.gc.collecting));
  if (!collecting || (*collecting != 0 && *collecting != 1)) return std::nullopt;  // garbage: cannot tell
  return *collecting == 1;
}

}  // namespace pyframes
