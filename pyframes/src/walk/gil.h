// Which thread state holds the GIL:
//   3.6       _PyThreadState_Current (the running thread, NULL while the GIL is released)
//   3.7-3.11  _PyRuntime.ceval.gil: locked + last_holder (else gilstate.tstate_current)
//   3.12+     the interpreter's GIL (interp->ceval.gil -> locked + last_holder)
#pragma once

#include <cstdint>

#include "pyframes/layout.h"
#include "pyframes/memory.h"
#include "pyframes/target.h"

namespace pyframes {

// The address of the interpreter's struct _gil_runtime_state (3.7+), 0 when it cannot be told
// (3.6 keeps its GIL in file-static variables).
uint64_t gil_state_address(const Memory& memory, const Layout& layout, const PythonTarget& target,
                           uint64_t interp) noexcept;

// The holder's thread-state address, 0 when the GIL is free or the holder cannot be told.
uint64_t gil_holder(const Memory& memory, const Layout& layout, const PythonTarget& target, uint64_t interp) noexcept;

}  // namespace pyframes
