#include "report/analysis/rank_ranges.h"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "pyframes/merge.h"

namespace hangshim::report {

// The same compression as pyframes' merged stacks ("ranks 0-6,8"), so a report and a pyframes
// dump of the same job write rank lists alike.
std::string format_ranks(const std::vector<int>& ranks) {
  return pyframes::compress_numbers(std::vector<int64_t>(ranks.begin(), ranks.end()));
}

std::string ranks_phrase(const std::vector<int>& ranks) {
  std::vector<int> unique = ranks;
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  return fmt::format("{} {}", unique.size() == 1 ? "rank" : "ranks", format_ranks(unique));
}

}  // namespace hangshim::report
