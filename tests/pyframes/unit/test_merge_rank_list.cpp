#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "pyframes/merge.h"

using namespace pyframes;

namespace {

MergedStacks members_with(const std::vector<std::pair<std::string, int64_t>>& rank_and_pid) {
  MergedStacks merged;
  for (size_t i = 0; i < rank_and_pid.size(); ++i) {
    MergeMember member;
    member.process = i;
    member.rank = rank_and_pid[i].first;
    member.pid = rank_and_pid[i].second;
    merged.members.push_back(member);
  }
  return merged;
}

std::vector<uint32_t> ids(size_t count) {
  std::vector<uint32_t> out(count);
  for (uint32_t i = 0; i < count; ++i) out[i] = i;
  return out;
}

}  // namespace

TEST_CASE("rank lists: runs compress, order and duplicates do not matter") {
  CHECK(compress_numbers({}) == "");
  CHECK(compress_numbers({7}) == "7");
  CHECK(compress_numbers({0, 1, 2, 3, 4, 5, 6, 8, 10, 11, 12}) == "0-6,8,10-12");
  CHECK(compress_numbers({12, 11, 10, 8, 6, 5, 4, 3, 2, 1, 0}) == "0-6,8,10-12");
  CHECK(compress_numbers({3, 3, 4, 4}) == "3-4");
  CHECK(compress_numbers({1, 3, 5}) == "1,3,5");
  CHECK(compress_numbers({-2, -1, 0}) == "-2-0");
}

TEST_CASE("rank lists: 1024 ranks with two outliers") {
  std::vector<int64_t> ranks;
  for (int64_t r = 0; r < 1024; ++r) {
    if (r != 17 && r != 900) ranks.push_back(r);
  }
  CHECK(compress_numbers(ranks) == "0-16,18-899,901-1023");
}

TEST_CASE("member labels: rank, ranks, pid, pids and a mix") {
  const MergedStacks merged = members_with({{"0", 10}, {"1", 11}, {"2", 12}, {"", 99}, {"", 98}});
  CHECK(describe_members(merged, {0}) == "rank 0");
  CHECK(describe_members(merged, {0, 1, 2}) == "ranks 0-2");
  CHECK(describe_members(merged, {3}) == "pid 99");
  CHECK(describe_members(merged, {3, 4}) == "pids 98-99");
  CHECK(describe_members(merged, ids(5)) == "ranks 0-2, pids 98-99");
}

TEST_CASE("member labels: RANK values that are not numbers are listed as they are") {
  const MergedStacks merged = members_with({{"0", 10}, {"worker-a", 11}, {"1", 12}});
  CHECK(describe_members(merged, ids(3)) == "ranks 0-1,worker-a");
}

TEST_CASE("member labels: more processes than ranks (forked workers inherit RANK) are counted") {
  const MergedStacks merged = members_with({{"0", 10}, {"0", 20}, {"1", 11}});
  CHECK(describe_members(merged, ids(3)) == "ranks 0-1 (3 processes)");
}

TEST_CASE("member labels: several threads of one process are counted as threads") {
  MergedStacks merged = members_with({{"3", 10}, {"3", 10}});
  merged.members[1].process = 0;
  CHECK(describe_members(merged, ids(2)) == "rank 3 (2 threads)");
}
