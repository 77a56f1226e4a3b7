// Where a running rank spends its time outside NCCL: its main thread's "your line", sampled from
// its live stack a number of times (pyframes, no ptrace stop). Used for stragglers: the line a
// slow rank is at while the others already wait for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "report/inputs/inputs.h"

namespace hangshim::report {

struct BusyLine {
  std::string file;
  std::string function;
  int line = 0;
  size_t hits = 0;     // samples at this line
  size_t samples = 0;  // samples taken outside NCCL (at none of the rank's call-site lines)
};

// Samples rank `view`'s main thread `count` times, `interval_ms` apart. Samples whose user line
// is one of the rank's own call-site lines (it waits in NCCL there) are left out. nullopt when
// the process cannot be read or every sample was in NCCL.
std::optional<BusyLine> sample_busy_line(const Inputs& inputs, const RankView& view, const LibraryPatterns& patterns,
                                         int count, int interval_ms);

}  // namespace hangshim::report
