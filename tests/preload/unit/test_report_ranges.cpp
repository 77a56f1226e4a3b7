#include <doctest/doctest.h>

#include "report/analysis/rank_ranges.h"

using hangshim::report::format_ranks;
using hangshim::report::ranks_phrase;

TEST_CASE("report: rank lists read as ranges") {
  CHECK(format_ranks({0, 1, 2, 4, 5, 6, 7}) == "0-2,4-7");
  CHECK(format_ranks({7, 3, 3, 1}) == "1,3,7");
  CHECK(format_ranks({5}) == "5");
  CHECK(format_ranks({}) == "");
  CHECK(ranks_phrase({3}) == "rank 3");
  CHECK(ranks_phrase({1, 2, 3}) == "ranks 1-3");
}
