// Labels for groups of merged stacks, beyond the public describe_members.
#pragma once

#include <string>
#include <vector>

#include "pyframes/merge.h"

namespace pyframes {

// describe_members; without `counts` only the ranks and pids ("ranks 0-2,7"), leaving out the
// thread name and the "(N threads)" / "(N processes)" that tell stacks from processes.
std::string describe_members(const MergedStacks& merged, const std::vector<uint32_t>& members, bool counts);

}  // namespace pyframes
