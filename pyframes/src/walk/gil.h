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

// The holder's thread-state address, 0 when the GIL is free or the holder cannot be told.
uint64_t gil_holder(const Memory& memory, const Layout& layout, const PythonTarget& target, uint64_t interp) noexcept;

}  // namespace pyframes
