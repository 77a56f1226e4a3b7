// The target's own _Py_DebugOffsets (3.13+): a table of offsets CPython keeps at the start of
// _PyRuntime for out-of-process tools, marked by the cookie "xdebugpy". Its own layout changed
// between 3.13 and 3.14 (taken from Include/internal/pycore_runtime.h at v3.13.0 and
// Include/internal/pycore_debug_offsets.h at v3.14.0; both stayed fixed across their micro
// releases). A version newer than 3.15 is read with 3.15's layout and must then pass
// check_newer_layout (layout/newer_layout_check.h) before anything trusts it.
#pragma once

#include <cstdint>

#include "pyframes/layout.h"
#include "pyframes/memory.h"
#include "pyframes/result.h"
#include "pyframes/versions.h"

namespace pyframes {

// The newest CPython minor version (3.x) whose _Py_DebugOffsets layout pyframes knows.
inline constexpr int kNewestDebugOffsetsMinor = kNewestCPythonMinor;

inline constexpr char kDebugCookie[8] = {'x', 'd', 'e', 'b', 'u', 'g', 'p', 'y'};

// Reads the cookie and version at `runtime_address`; nullopt when there is no cookie there.
std::optional<uint32_t> read_debug_offsets_version(const Memory& memory, uint64_t runtime_address);

// Whether the table at `runtime_address` says the build is free-threaded (--disable-gil).
bool debug_offsets_free_threaded(const Memory& memory, uint64_t runtime_address);

// Fills `layout` with every offset the debug table carries, overriding what is there, and
// layout.free_threaded. Versions after 3.15 get 3.15's layout, unchecked; other majors fail.
Result<void> apply_debug_offsets(const Memory& memory, uint64_t runtime_address, Layout& layout);

}  // namespace pyframes
