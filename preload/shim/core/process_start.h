// What the kernel says about a process in /proc/PID/stat that hangshim uses: its state, its
// parent and when it started (field 22: clock ticks since boot). With its pid and host, the
// start time names one process for good: pids are reused, (pid, start) are not. One parser for
// the shim (the ledger's parent), `hangshim run` (HANGSHIM_LAUNCHER) and the report (liveness,
// processes with the shim loaded); never on the hot path.
#pragma once

#include <cstdint>

namespace hangshim::shim {

struct ProcessStat {
  char state = '?';          // R, S, D, Z (zombie), X (dead), t/T (stopped), ...
  int64_t ppid = 0;
  uint64_t start_ticks = 0;  // clock ticks since boot
};

// False when there is no such process or /proc cannot be read.
bool read_process_stat(int64_t pid, ProcessStat& out) noexcept;

// Its start time, 0 when unknown.
uint64_t process_start_ticks(int64_t pid) noexcept;

}  // namespace hangshim::shim
