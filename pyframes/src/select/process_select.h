// Choosing processes for a whole-job view: the descendants of a launcher (torchrun, deepspeed,
// accelerate, srun, mpirun: any depth), or the processes whose command line matches a pattern
// (like pgrep -f). Whether each one runs Python is for the reader to find out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pyframes/result.h"

namespace pyframes {

struct ProcessEntry {
  int64_t pid = 0;
  int64_t ppid = 0;
};

// Every process on this machine (what /proc shows), by pid.
std::vector<ProcessEntry> list_processes();

// All descendants of `pid` in the process tree `entries`, breadth first (children before
// grandchildren), each in pid order. `pid` itself is not included.
std::vector<int64_t> descendants_of(int64_t pid, const std::vector<ProcessEntry>& entries);

// The descendants of a live process; NotFound when `pid` does not exist.
Result<std::vector<int64_t>> live_descendants(int64_t pid);

// Live processes whose command line (arguments joined by spaces) matches the POSIX extended
// regular expression `pattern`, in pid order, leaving out `exclude` (the caller itself).
// Usage error for a pattern that does not compile.
Result<std::vector<int64_t>> processes_matching(const std::string& pattern, int64_t exclude);

}  // namespace pyframes
