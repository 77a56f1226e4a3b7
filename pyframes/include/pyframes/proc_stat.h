// What the kernel says about a process (or one of its threads) in /proc/PID/stat: its state,
// its parent and when it started. The one parser of that file for all of hangshim: pyframes
// (a process's parent, a thread's state, whether a target has exited), the shim (its parent's
// start time, written into the ledger), `hangshim run` and `hangshim report` (liveness).
//
// Allocation-free and noexcept: the path is formatted into a stack buffer and the file read
// into another, so the shim may call it (never on its hot path: the ledger's creation only).
// Its object file needs libc and nothing else, so linking it into libhangshim.so (which links
// pyframes' archive already) pulls in none of pyframes' heavier dependencies; that is why the
// shim uses this parser rather than a header-only copy of its own.
#pragma once

#include <cstdint>
#include <string_view>

namespace pyframes {

struct ProcStat {
  char state = '?';          // field 3: R, S, D, Z (zombie), X (dead), t/T (stopped), ...
  int64_t ppid = 0;          // field 4
  uint64_t start_ticks = 0;  // field 22: clock ticks since boot. With the pid and the host it
                             // names one process for good: pids are reused, (pid, start) are not.
};

// Parses the text of a stat file: "pid (comm) state ppid ...". comm may hold spaces and
// parentheses, so fields 3 on are counted from the last ')'. False unless fields 3 to 22 are
// all there (the kernel writes 52).
bool parse_proc_stat(std::string_view text, ProcStat& out) noexcept;

// /proc/PID/stat; false when there is no such process, /proc cannot be read or the text does
// not parse.
bool read_proc_stat(int64_t pid, ProcStat& out) noexcept;

// /proc/PID/task/TID/stat: one thread's own state (the other fields are the process's).
bool read_thread_stat(int64_t pid, int64_t tid, ProcStat& out) noexcept;

}  // namespace pyframes
