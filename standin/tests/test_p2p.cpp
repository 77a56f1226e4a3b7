// ncclSend / ncclRecv: pairing by peer inside groups, messages longer than a channel chunk,
// sends to self, and ordered ungrouped exchanges.
#include "harness.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

using namespace fakenccl_test;

namespace {

std::vector<std::int64_t> message(int from, int to, std::size_t n) {
  std::vector<std::int64_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = from * 1000000 + to * 1000 + static_cast<std::int64_t>(i);
  return v;
}

// Every rank sends to its right neighbour and receives from its left one, and sends to itself:
// only possible when the group lets all of it progress at once.
int ring(int rank, const ncclUniqueId& id, int n, std::size_t count) {
  ncclComm_t comm;
  if (!expect_ok(ncclCommInitRank(&comm, n, id, rank), rank, "init")) return 1;
  const int right = (rank + 1) % n;
  const int left = (rank + n - 1) % n;
  for (int round = 0; round < 3; ++round) {
    auto out = message(rank, right, count);
    auto self_out = message(rank, rank, count);
    std::vector<std::int64_t> in(count, -1), self_in(count, -1);
    bool ok = expect_ok(ncclGroupStart(), rank, "groupstart");
    ok = ok && expect_ok(ncclSend(out.data(), count, ncclInt64, right, comm, nullptr), rank, "send");
    ok = ok && expect_ok(ncclRecv(in.data(), count, ncclInt64, left, comm, nullptr), rank, "recv");
    ok = ok && expect_ok(ncclSend(self_out.data(), count, ncclInt64, rank, comm, nullptr), rank, "send self");
    ok = ok && expect_ok(ncclRecv(self_in.data(), count, ncclInt64, rank, comm, nullptr), rank, "recv self");
    ok = ok && expect_ok(ncclGroupEnd(), rank, "groupend");
    if (!ok) return 1;
    if (!expect(in == message(left, rank, count), rank, "ring data from the left neighbour")) return 1;
    if (!expect(self_in == self_out, rank, "data sent to self")) return 1;
  }
  ncclCommDestroy(comm);
  return 0;
}

}  // namespace

TEST_CASE("p2p: grouped ring exchange, with and without chunking") {
  for (int n : {2, 3, 8}) {
    CAPTURE(n);
    auto results = run_ranks(n, [&](int rank, const ncclUniqueId& id) { return ring(rank, id, n, 1000); },
                             std::chrono::seconds(30));
    CHECK_MESSAGE(all_succeeded(results), describe(results));
    results = run_ranks(n, [&](int rank, const ncclUniqueId& id) { return ring(rank, id, n, 1000); },
                        std::chrono::seconds(30), {"HANGSHIM_FAKE_CHUNK_BYTES=512"});
    CHECK_MESSAGE(all_succeeded(results), describe(results));
  }
}

TEST_CASE("p2p: ungrouped send then recv pairs in program order") {
  const auto results = run_ranks(2, [](int rank, const ncclUniqueId& id) {
    ncclComm_t comm;
    if (!expect_ok(ncclCommInitRank(&comm, 2, id, rank), rank, "init")) return 1;
    const int peer = 1 - rank;
    std::vector<std::int64_t> in(100, -1);
    auto out = message(rank, peer, 100);
    // Rank 0 sends first, rank 1 receives first: a send blocks until its receive, so the
    // opposite order on both ranks would deadlock, as NCCL documents.
    for (int step = 0; step < 2; ++step) {
      const bool sending = (step == 0) == (rank == 0);
      const ncclResult_t r = sending ? ncclSend(out.data(), 100, ncclInt64, peer, comm, nullptr)
                                     : ncclRecv(in.data(), 100, ncclInt64, peer, comm, nullptr);
      if (!expect_ok(r, rank, sending ? "send" : "recv")) return 1;
    }
    if (!expect(in == message(peer, rank, 100), rank, "received data")) return 1;
    ncclCommDestroy(comm);
    return 0;
  }, std::chrono::seconds(30));
  CHECK_MESSAGE(all_succeeded(results), describe(results));
}

TEST_CASE("p2p: a send nobody receives blocks, with HANGSHIM_FAKE_TIMEOUT it fails") {
  const auto body = [](int rank, const ncclUniqueId& id) {
    ncclComm_t comm;
    if (!expect_ok(ncclCommInitRank(&comm, 2, id, rank), rank, "init")) return 1;
    if (rank == 1) return 0;  // never receives
    std::int64_t x = 7;
    reached(1);
    const ncclResult_t r = ncclSend(&x, 1, ncclInt64, 1, comm, nullptr);
    return r == ncclSystemError ? 3 : 1;
  };
  auto results = run_ranks_until_asleep(2, body, 1, {0});
  CHECK_MESSAGE((!results[0].exited && results[0].state == 'S'), describe(results));
  // The timeout only for the send (set once init is done), however late the ranks start.
  results = run_ranks(2, [&](int rank, const ncclUniqueId& id) {
    ncclComm_t comm;
    if (!expect_ok(ncclCommInitRank(&comm, 2, id, rank), rank, "init")) return 1;
    if (rank == 1) return 0;
    setenv("HANGSHIM_FAKE_TIMEOUT", "0.3", 1);
    std::int64_t x = 7;
    return ncclSend(&x, 1, ncclInt64, 1, comm, nullptr) == ncclSystemError ? 3 : 1;
  }, std::chrono::seconds(60));
  CHECK_MESSAGE((results[0].exited && results[0].code == 3), describe(results));
}
