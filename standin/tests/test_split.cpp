// ncclCommSplit: colors pick members, keys order them, NCCL_SPLIT_NOCOLOR opts out, children
// work independently of the parent and can be split again.
#include "harness.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

using namespace fakenccl_test;

TEST_CASE("split: color, key order, NOCOLOR, and a split of a split") {
  for (int n : {4, 6, 8}) {
    CAPTURE(n);
    const auto results = run_ranks(n, [n](int rank, const ncclUniqueId& id) {
      ncclComm_t world;
      if (!expect_ok(ncclCommInitRank(&world, n, id, rank), rank, "init")) return 1;
      // Rank n-1 opts out; the rest split by parity, ordered by descending parent rank.
      const int color = rank == n - 1 ? NCCL_SPLIT_NOCOLOR : rank % 2;
      ncclComm_t child = nullptr;
      if (!expect_ok(ncclCommSplit(world, color, -rank, &child, nullptr), rank, "split")) return 1;
      if (color == NCCL_SPLIT_NOCOLOR) {
        if (!expect(child == nullptr, rank, "NOCOLOR gives a NULL communicator")) return 1;
      } else {
        std::vector<int> members;
        for (int r = n - 2; r >= 0; --r) if (r % 2 == color) members.push_back(r);
        int child_rank = -1, child_size = -1;
        ncclCommUserRank(child, &child_rank);
        ncclCommCount(child, &child_size);
        const auto want_rank = std::find(members.begin(), members.end(), rank) - members.begin();
        if (!expect(child_size == static_cast<int>(members.size()) && child_rank == want_rank, rank,
                    "child rank ordered by key")) return 1;
        int sum = rank;
        if (!expect_ok(ncclAllReduce(&sum, &sum, 1, ncclInt32, ncclSum, child, nullptr), rank, "child allreduce")) return 1;
        int want_sum = 0;
        for (int m : members) want_sum += m;
        if (!expect(sum == want_sum, rank, "child allreduce sums only the members")) return 1;
        // A split of the child: everyone alone.
        ncclComm_t alone = nullptr;
        if (!expect_ok(ncclCommSplit(child, child_rank, 0, &alone, nullptr), rank, "split of split")) return 1;
        int solo = 5;
        if (!expect_ok(ncclAllReduce(&solo, &solo, 1, ncclInt32, ncclSum, alone, nullptr), rank, "solo allreduce")) return 1;
        if (!expect(solo == 5, rank, "a one-rank communicator")) return 1;
        ncclCommDestroy(alone);
        ncclCommDestroy(child);
      }
      int all = 1;
      if (!expect_ok(ncclAllReduce(&all, &all, 1, ncclInt32, ncclSum, world, nullptr), rank, "world allreduce")) return 1;
      ncclCommDestroy(world);
      return expect(all == n, rank, "the parent still works") ? 0 : 1;
    }, std::chrono::seconds(30));
    CHECK_MESSAGE(all_succeeded(results), describe(results));
  }
}
