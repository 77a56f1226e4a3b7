// Group semantics: work issued between ncclGroupStart and the outermost ncclGroupEnd starts at
// that GroupEnd; several communicators can be driven from one thread; an argument error inside a
// group fails the whole group.
#include "harness.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

using namespace fakenccl_test;

TEST_CASE("group: ncclCommInitAll and one thread driving all communicators") {
  for (int n : {2, 4, 8}) {
    CAPTURE(n);
    const auto result = run_process([n] {
      std::vector<ncclComm_t> comms(static_cast<std::size_t>(n));
      if (!expect_ok(ncclCommInitAll(comms.data(), n, nullptr), 0, "ncclCommInitAll")) return 1;
      std::vector<std::vector<float>> bufs;
      for (int r = 0; r < n; ++r) bufs.emplace_back(64, static_cast<float>(r + 1));
      bool ok = expect_ok(ncclGroupStart(), 0, "groupstart");
      for (int r = 0; r < n; ++r) {
        auto& b = bufs[static_cast<std::size_t>(r)];
        ok = ok && expect_ok(ncclAllReduce(b.data(), b.data(), b.size(), ncclFloat32, ncclSum,
                                           comms[static_cast<std::size_t>(r)], nullptr), r, "allreduce");
      }
      ok = ok && expect_ok(ncclGroupEnd(), 0, "groupend");
      if (!ok) return 1;
      const float want = static_cast<float>(n * (n + 1) / 2);
      for (int r = 0; r < n; ++r) {
        int rank = -1, count = -1, dev = -1;
        ncclCommUserRank(comms[static_cast<std::size_t>(r)], &rank);
        ncclCommCount(comms[static_cast<std::size_t>(r)], &count);
        ncclCommCuDevice(comms[static_cast<std::size_t>(r)], &dev);
        if (!expect(rank == r && count == n && dev == r, r, "rank, count and device of ncclCommInitAll's comms")) return 1;
        if (!expect(bufs[static_cast<std::size_t>(r)] == std::vector<float>(64, want), r, "sum")) return 1;
        ncclCommDestroy(comms[static_cast<std::size_t>(r)]);
      }
      return 0;
    }, std::chrono::seconds(30));
    CHECK_MESSAGE((result.exited && result.code == 0), "exit " << result.code);
  }
}

TEST_CASE("group: nothing starts before the outermost ncclGroupEnd") {
  const auto results = run_ranks(2, [](int rank, const ncclUniqueId& id) {
    ncclComm_t comm;
    if (!expect_ok(ncclCommInitRank(&comm, 2, id, rank), rank, "init")) return 1;
    std::int32_t send = rank + 1, recv = -1;
    if (rank == 1) {  // plain call: waits for rank 0's launch
      if (!expect_ok(ncclAllReduce(&send, &recv, 1, ncclInt32, ncclSum, comm, nullptr), rank, "allreduce")) return 1;
      return expect(recv == 3, rank, "sum") ? 0 : 1;
    }
    bool ok = expect_ok(ncclGroupStart(), rank, "outer start") && expect_ok(ncclGroupStart(), rank, "inner start") &&
              expect_ok(ncclAllReduce(&send, &recv, 1, ncclInt32, ncclSum, comm, nullptr), rank, "allreduce") &&
              expect_ok(ncclGroupEnd(), rank, "inner end");
    if (!ok) return 1;
    if (!expect(recv == -1, rank, "the inner ncclGroupEnd launched nothing")) return 1;
    if (!expect_ok(ncclGroupEnd(), rank, "outer end")) return 1;
    return expect(recv == 3, rank, "the outer ncclGroupEnd ran the allreduce") ? 0 : 1;
  }, std::chrono::seconds(30));
  CHECK_MESSAGE(all_succeeded(results), describe(results));
}

TEST_CASE("group: an invalid call inside a group cancels the group") {
  const auto result = run_process([] {
    ncclComm_t comms[2];
    if (!expect_ok(ncclCommInitAll(comms, 2, nullptr), 0, "init")) return 1;
    float x = 1;
    ncclGroupStart();
    const ncclResult_t bad = ncclAllReduce(&x, &x, 1, static_cast<ncclDataType_t>(99), ncclSum, comms[0], nullptr);
    const ncclResult_t end = ncclGroupEnd();
    if (!expect(bad == ncclInvalidArgument && end == ncclInvalidArgument, 0, "both calls report the bad datatype")) return 1;
    if (!expect(ncclGroupEnd() == ncclInvalidUsage, 0, "a GroupEnd without GroupStart is invalid usage")) return 1;
    // The communicators are still usable: the cancelled call took no sequence number.
    float a = 1, b = 2;
    ncclGroupStart();
    ncclAllReduce(&a, &a, 1, ncclFloat32, ncclSum, comms[0], nullptr);
    ncclAllReduce(&b, &b, 1, ncclFloat32, ncclSum, comms[1], nullptr);
    if (!expect_ok(ncclGroupEnd(), 0, "groupend")) return 1;
    return expect(a == 3 && b == 3, 0, "sum after the cancelled group") ? 0 : 1;
  }, std::chrono::seconds(30));
  CHECK_MESSAGE((result.exited && result.code == 0), "exit " << result.code);
}

TEST_CASE("group: ncclCommInitRank inside a group completes at ncclGroupEnd") {
  const auto results = run_ranks(3, [](int rank, const ncclUniqueId& id) {
    ncclComm_t comm = nullptr;
    bool ok = expect_ok(ncclGroupStart(), rank, "start") && expect_ok(ncclCommInitRank(&comm, 3, id, rank), rank, "init") &&
              expect_ok(ncclGroupEnd(), rank, "end");
    if (!ok) return 1;
    int x = rank;
    if (!expect_ok(ncclAllReduce(&x, &x, 1, ncclInt32, ncclMax, comm, nullptr), rank, "allreduce")) return 1;
    ncclCommDestroy(comm);
    return expect(x == 2, rank, "max") ? 0 : 1;
  }, std::chrono::seconds(30));
  CHECK_MESSAGE(all_succeeded(results), describe(results));
}
