// Whether the garbage collector is running a collection, as pystack's is_gc_collecting: a hang
// inside a collection (a __del__ that takes a lock, a finalizer that calls into CUDA) looks like
// any other Python stack unless this is known.
//   3.6       cannot tell: `collecting` is a static variable of gcmodule.c
//   3.7, 3.8  _PyRuntime.gc.collecting
//   3.9+      interp->gc.collecting (generated tables; 3.13+ from _Py_DebugOffsets)
#pragma once

#include <cstdint>
#include <optional>

#include "pyframes/layout.h"
#include "pyframes/memory.h"
#include "pyframes/target.h"

namespace pyframes {

// true while a collection runs, false when none does, nullopt when it cannot be told (3.6, an
// unreadable or implausible value).
std::optional<bool> gc_collecting(const Memory& memory, const Layout& layout, const PythonTarget& target,
                                  uint64_t interp) noexcept;

}  // namespace pyframes
