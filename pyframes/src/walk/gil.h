// Which thread state holds the GIL:
//   3.6       _PyThreadState_Current (the running thread, NULL while the GIL is released)
//   3.7-3.11  _PyRuntime.ceval.gil: locked + last_holder (else gilstate.tstate_current)
//   3.12+     the interpreter's GIL (interp->ceval.gil -> locked + last_holder)
//   free-threaded builds: none while the GIL is off (`enabled` 0, the usual case); an extension
//   module that is not marked safe can turn it on, and then it is held as in the default build
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

// Free-threaded builds: whether the interpreter runs with its GIL off (false when it cannot be
// told, and in default builds).
bool gil_disabled(const Memory& memory, const Layout& layout, const PythonTarget& target, uint64_t interp) noexcept;

}  // namespace pyframes
