// Ranks whose situations read the same merge into one group (pid, host, times aside): what the
// report lists under "ranks", one line per group rather than per rank.
#pragma once

#include <vector>

#include "report/analysis/model.h"

namespace hangshim::report {

// The shown situations grouped, in order of each group's first member; a group's ranks in the
// situations' order.
std::vector<RankGroup> group_situations(const std::vector<RankSituation>& situations);

}  // namespace hangshim::report
