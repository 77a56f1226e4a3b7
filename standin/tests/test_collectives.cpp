// Data movement of every collective (and the in-place forms NCCL defines), checked against the
// values each rank can compute from the inputs' formula: rank r's element i is r * 1000 + i.
#include "harness.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

using namespace fakenccl_test;

namespace {

using Vec = std::vector<std::int32_t>;

std::int32_t value(int rank, std::size_t i) { return rank * 1000 + static_cast<std::int32_t>(i); }

Vec filled(std::size_t n, int rank) {
  Vec v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = value(rank, i);
  return v;
}

struct Checker {
  int rank;
  int failures = 0;
  void equal(const Vec& got, const Vec& want, const std::string& what) {
    if (got != want) {
      ++failures;
      std::size_t i = 0;
      while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
      expect(false, rank, what + ": first difference at element " + std::to_string(i));
    }
  }
};

int run_all(int rank, const ncclUniqueId& id, int n, std::size_t c) {
  ncclComm_t comm;
  if (!expect_ok(ncclCommInitRank(&comm, n, id, rank), rank, "init")) return 1;
  Checker check{rank};
  const auto un = static_cast<std::size_t>(n);
  const auto me = static_cast<std::size_t>(rank);
  auto ok = [&](ncclResult_t r, const char* call) { return expect_ok(r, rank, call); };

  for (int root = 0; root < n; ++root) {
    Vec send = filled(c, rank), recv(c, -1);
    if (!ok(ncclBroadcast(rank == root ? send.data() : nullptr, recv.data(), c, ncclInt32, root, comm, nullptr), "broadcast")) return 1;
    check.equal(recv, filled(c, root), "broadcast root " + std::to_string(root));

    Vec buf = filled(c, rank);
    if (!ok(ncclBcast(buf.data(), c, ncclInt32, root, comm, nullptr), "bcast")) return 1;
    check.equal(buf, filled(c, root), "bcast (in place) root " + std::to_string(root));

    Vec reduced(c, -1);
    if (!ok(ncclReduce(send.data(), rank == root ? reduced.data() : nullptr, c, ncclInt32, ncclSum, root, comm, nullptr), "reduce")) return 1;
    if (rank == root) {
      Vec want(c, 0);
      for (int r = 0; r < n; ++r) for (std::size_t i = 0; i < c; ++i) want[i] += value(r, i);
      check.equal(reduced, want, "reduce root " + std::to_string(root));
    }

    Vec gathered(c * un, -1);
    if (!ok(ncclGather(send.data(), rank == root ? gathered.data() : nullptr, c, ncclInt32, root, comm, nullptr), "gather")) return 1;
    if (rank == root) {
      Vec want;
      for (int r = 0; r < n; ++r) { Vec part = filled(c, r); want.insert(want.end(), part.begin(), part.end()); }
      check.equal(gathered, want, "gather root " + std::to_string(root));
    }

    Vec blocks = filled(c * un, rank), piece(c, -1);
    if (!ok(ncclScatter(rank == root ? blocks.data() : nullptr, piece.data(), c, ncclInt32, root, comm, nullptr), "scatter")) return 1;
    Vec want_piece(c);
    for (std::size_t i = 0; i < c; ++i) want_piece[i] = value(root, me * c + i);
    check.equal(piece, want_piece, "scatter root " + std::to_string(root));
  }

  Vec send = filled(c, rank);
  Vec all_want;
  for (int r = 0; r < n; ++r) { Vec part = filled(c, r); all_want.insert(all_want.end(), part.begin(), part.end()); }
  Vec gathered(c * un, -1);
  if (!ok(ncclAllGather(send.data(), gathered.data(), c, ncclInt32, comm, nullptr), "allgather")) return 1;
  check.equal(gathered, all_want, "allgather");

  Vec inplace(c * un, -1);
  std::copy(send.begin(), send.end(), inplace.begin() + static_cast<std::ptrdiff_t>(me * c));
  if (!ok(ncclAllGather(inplace.data() + me * c, inplace.data(), c, ncclInt32, comm, nullptr), "allgather in place")) return 1;
  check.equal(inplace, all_want, "allgather in place");

  Vec big = filled(c * un, rank), scattered(c, -1), rs_want(c, 0);
  for (int r = 0; r < n; ++r) for (std::size_t i = 0; i < c; ++i) rs_want[i] += value(r, me * c + i);
  if (!ok(ncclReduceScatter(big.data(), scattered.data(), c, ncclInt32, ncclSum, comm, nullptr), "reducescatter")) return 1;
  check.equal(scattered, rs_want, "reducescatter");
  if (!ok(ncclReduceScatter(big.data(), big.data() + me * c, c, ncclInt32, ncclSum, comm, nullptr), "reducescatter in place")) return 1;
  check.equal(Vec(big.begin() + static_cast<std::ptrdiff_t>(me * c), big.begin() + static_cast<std::ptrdiff_t>((me + 1) * c)),
              rs_want, "reducescatter in place");

  Vec a2a_send = filled(c * un, rank), a2a_recv(c * un, -1), a2a_want(c * un);
  for (int r = 0; r < n; ++r) for (std::size_t i = 0; i < c; ++i) a2a_want[static_cast<std::size_t>(r) * c + i] = value(r, me * c + i);
  if (!ok(ncclAlltoAll(a2a_send.data(), a2a_recv.data(), c, ncclInt32, comm, nullptr), "alltoall")) return 1;
  check.equal(a2a_recv, a2a_want, "alltoall");

  Vec ar = filled(c, rank), ar_want(c, 0);
  for (int r = 0; r < n; ++r) for (std::size_t i = 0; i < c; ++i) ar_want[i] += value(r, i);
  if (!ok(ncclAllReduce(ar.data(), ar.data(), c, ncclInt32, ncclSum, comm, nullptr), "allreduce in place")) return 1;
  check.equal(ar, ar_want, "allreduce in place");

  // Zero elements still synchronize and move nothing.
  if (!ok(ncclAllReduce(nullptr, nullptr, 0, ncclInt32, ncclSum, comm, nullptr), "allreduce count 0")) return 1;

  ncclCommDestroy(comm);
  return check.failures == 0 ? 0 : 1;
}

}  // namespace

TEST_CASE("collectives: broadcast, reduce, gather, scatter, allgather, reducescatter, alltoall") {
  for (int n : {2, 3, 5, 8}) {
    for (const char* chunk : {"", "512"}) {
      CAPTURE(n);
      CAPTURE(chunk);
      std::vector<std::string> env;
      if (*chunk != '\0') env.push_back(std::string("HANGSHIM_FAKE_CHUNK_BYTES=") + chunk);
      const auto results = run_ranks(n, [&](int rank, const ncclUniqueId& id) { return run_all(rank, id, n, 301); },
                                     std::chrono::seconds(60), env);
      CHECK_MESSAGE(all_succeeded(results), describe(results));
    }
  }
}
