// Rank lists as people read them: [0, 1, 2, 4, 5, 6, 7] -> "0-2,4-7". Here, not in wording/,
// because the classifiers write rank lists into their findings' reasons.
#pragma once

#include <string>
#include <vector>

namespace hangshim::report {

// "0-2,4-7"; duplicates are ignored, the input need not be sorted; "" for none.
std::string format_ranks(const std::vector<int>& ranks);

// "rank 3" or "ranks 0-2,4-7" (the noun agrees with the count).
std::string ranks_phrase(const std::vector<int>& ranks);

}  // namespace hangshim::report
