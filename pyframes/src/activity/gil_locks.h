// Where a target's GIL keeps its mutexes and condition variables. A thread asleep in futex() on
// one of these addresses waits for the GIL (take_gil), or for a GIL switch (drop_gil with
// FORCE_SWITCHING); a futex anywhere else is some other lock.
#pragma once

#include "pyframes/layout.h"
#include "pyframes/memory.h"
#include "pyframes/module_map.h"
#include "pyframes/target.h"
#include "pyframes/thread_activity.h"

namespace pyframes {

//   3.7+  struct _gil_runtime_state of every interpreter: interval, last_holder, locked,
//         switch_number, then cond, mutex, switch_cond, switch_mutex (pthread types)
//   3.6   the file-static gil_cond, gil_mutex, switch_cond, switch_mutex of ceval.c, found in
//         the module's .symtab (empty when the module is stripped)
GilLockRanges gil_lock_ranges(const Memory& memory, const ModuleMap& modules, const PythonTarget& target,
                              const Layout& layout, const FileResolver& resolve);

}  // namespace pyframes
