// Situations merge into groups exactly when their texts read the same: the fields are grouped
// first, for speed, and must merge again where two different field sets read as one text.
#include <doctest/doctest.h>

#include "report/analysis/situation_groups.h"

using namespace hangshim::report;

namespace {

RankSituation waiting_in(int rank, std::string op, uint64_t seq, std::string file) {
  RankSituation s;
  s.rank = rank;
  s.state = RankState::InCollective;
  Call c;
  c.comm = 0;
  c.op = std::move(op);
  c.seq = seq;
  c.site = Site{std::move(file), "train", 88};
  c.iteration = 7;
  c.dtype = "float32";
  s.current = c;
  s.pid = 1000 + rank;  // pid and host never split a group
  s.host = rank % 2 ? "node1" : "node0";
  return s;
}

}  // namespace

TEST_CASE("report: situations group by what they read as, in order of their first rank") {
  std::vector<RankSituation> all;
  all.push_back(waiting_in(0, "all_reduce", 5, "train.py"));
  all.push_back(waiting_in(1, "broadcast", 5, "train.py"));
  all.push_back(waiting_in(2, "all_reduce", 5, "train.py"));
  all.push_back(waiting_in(3, "all_reduce", 5, "train.py"));
  all.push_back(waiting_in(4, "broadcast", 5, "train.py"));
  all[3].shown = false;  // --rank left it out
  std::vector<RankGroup> groups = group_situations(all);
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].ranks == std::vector<int>{0, 2});
  CHECK(groups[0].example == 0);
  CHECK(groups[1].ranks == std::vector<int>{1, 4});
  CHECK(groups[1].example == 1);
}

TEST_CASE("report: situations whose different fields read as the same text are one group") {
  // op "all|7" at #3 in file "f" against op "all" at #7 in file "3|f": the fields differ, the
  // texts the grouping compares ("...|all|7|3|f|...") do not.
  std::vector<RankSituation> all;
  all.push_back(waiting_in(0, "all|7", 3, "f"));
  all.push_back(waiting_in(1, "barrier", 1, "f"));
  all.push_back(waiting_in(2, "all", 7, "3|f"));
  all.push_back(waiting_in(3, "all|7", 3, "f"));
  std::vector<RankGroup> groups = group_situations(all);
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].ranks == std::vector<int>{0, 2, 3});
  CHECK(groups[0].example == 0);
  CHECK(groups[1].ranks == std::vector<int>{1});
}
