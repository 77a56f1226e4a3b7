// Finding the runtime without symbols (stripped binaries, or ReadOptions::use_symbols=false):
// scan the Python module's writable data (.data/.bss) for what validates as the runtime.
//   3.13+     the _Py_DebugOffsets cookie "xdebugpy" opens _PyRuntime
//   3.7-3.12  _PyRuntime: a word at interpreters.head and one at interpreters.main that both
//             point to interpreters whose thread list points back at them
//   3.6       any word pointing to such an interpreter (interp_head, or a copy of it)
#pragma once

#include "pyframes/layout.h"
#include "pyframes/memory.h"
#include "pyframes/module_map.h"
#include "pyframes/result.h"
#include "pyframes/target.h"

namespace pyframes {

// Fills target.runtime_address (3.7+) or target.interp_head_address (3.6) from a scan of
// target.data_ranges. `layout` must be the version's table layout.
Result<void> scan_for_runtime(const Memory& memory, const ModuleMap& modules, const Layout& layout,
                              PythonTarget& target);

// True when `interp` looks like a live PyInterpreterState: its first thread state points back
// at it and carries a mapped pthread_t, and its sys.modules is a dict holding "sys".
bool plausible_interpreter(const Memory& memory, const ModuleMap& modules, const Layout& layout, uint64_t interp);

}  // namespace pyframes
