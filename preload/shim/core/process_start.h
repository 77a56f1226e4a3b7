// When a process started, as the kernel says (/proc/PID/stat field 22: clock ticks since boot).
// With its pid and host it names one process for good: pids are reused, (pid, start) are not.
// Used once per process (the ledger's parent) and by `hangshim run` (HANGSHIM_LAUNCHER); never
// on the hot path.
#pragma once

#include <cstdint>

namespace hangshim::shim {

// 0 when unknown (no such process, /proc unreadable).
uint64_t process_start_ticks(int64_t pid) noexcept;

}  // namespace hangshim::shim
