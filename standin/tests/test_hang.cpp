// The stand-in hangs where NCCL hangs: a collective waits (asleep, not spinning) until every rank
// issued the same call; mismatched calls never match; a dead rank is waited for forever. With
// HANGSHIM_FAKE_TIMEOUT those waits become ncclSystemError with a message saying what was missing.
#include "harness.h"

#include <doctest/doctest.h>

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <string>
#include <vector>

using namespace fakenccl_test;

namespace {

constexpr int kTimedOut = 3;  // a rank's exit code for "got ncclSystemError and the right message"

constexpr int kThirdCall = 1;  // the step (harness reached()) before the third call

// Runs two matched allreduces, then `diverge` decides what each rank does for the third call.
// With `timeout` (HANGSHIM_FAKE_TIMEOUT, set only now that the ranks are in step, so a rank the
// machine schedules late cannot make an earlier call time out), returns kTimedOut when the
// third call failed with a message containing `needle`.
int third_call(int rank, const ncclUniqueId& id, int n, const std::function<ncclResult_t(int, ncclComm_t)>& diverge,
               const char* needle, const char* timeout = nullptr) {
  ncclComm_t comm;
  if (!expect_ok(ncclCommInitRank(&comm, n, id, rank), rank, "init")) return 1;
  for (int i = 0; i < 2; ++i) {
    float x = 1;
    if (!expect_ok(ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, comm, nullptr), rank, "allreduce")) return 1;
  }
  if (timeout != nullptr) setenv("HANGSHIM_FAKE_TIMEOUT", timeout, 1);
  reached(kThirdCall);
  const ncclResult_t r = diverge(rank, comm);
  if (r == ncclSuccess) return 0;
  const std::string text = ncclGetLastError(comm);
  if (r != ncclSystemError || text.find(needle) == std::string::npos || text.find("timed out") == std::string::npos) {
    std::fprintf(stderr, "rank %d: result %d, last error: %s\n", rank, static_cast<int>(r), text.c_str());
    return 1;
  }
  ncclResult_t async = ncclSuccess;
  ncclCommGetAsyncError(comm, &async);
  float y = 0;
  // A communicator that failed refuses further work at once instead of waiting again.
  if (async != ncclSystemError || ncclAllReduce(&y, &y, 1, ncclFloat32, ncclSum, comm, nullptr) != ncclSystemError) {
    std::fprintf(stderr, "rank %d: async error %d after the timeout\n", rank, static_cast<int>(async));
    return 1;
  }
  return kTimedOut;
}

ncclResult_t skip_on_rank0(int rank, ncclComm_t comm) {
  if (rank == 0) return ncclSuccess;
  float x = 1;
  return ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, comm, nullptr);
}

ncclResult_t count_mismatch(int rank, ncclComm_t comm) {
  float x[8] = {};
  return ncclAllReduce(x, x, rank == 1 ? 8 : 4, ncclFloat32, ncclSum, comm, nullptr);
}

ncclResult_t root_mismatch(int rank, ncclComm_t comm) {
  float x[4] = {};
  return ncclBroadcast(x, x, 4, ncclFloat32, rank == 0 ? 0 : 1, comm, nullptr);
}

ncclResult_t dtype_mismatch(int rank, ncclComm_t comm) {
  double x[4] = {};
  return ncclAllReduce(x, x, 4, rank == 0 ? ncclFloat64 : ncclInt64, ncclSum, comm, nullptr);
}

void check_blocks(int n, const std::function<ncclResult_t(int, ncclComm_t)>& diverge, const std::vector<int>& blocked) {
  const auto results = run_ranks_until_asleep(n, [&](int rank, const ncclUniqueId& id) {
    return third_call(rank, id, n, diverge, "");
  }, kThirdCall, blocked);
  for (int r : blocked) {
    const RankResult& res = results[static_cast<std::size_t>(r)];
    CHECK_MESSAGE((!res.exited && res.state == 'S'), "rank ", r, " should wait, asleep: ", describe(results));
  }
}

void check_times_out(int n, const std::function<ncclResult_t(int, ncclComm_t)>& diverge, const std::vector<int>& failing,
                     const char* needle) {
  const auto results = run_ranks(n, [&](int rank, const ncclUniqueId& id) {
    return third_call(rank, id, n, diverge, needle, "0.4");
  }, std::chrono::seconds(60));
  for (int r : failing) {
    const RankResult& res = results[static_cast<std::size_t>(r)];
    CHECK_MESSAGE((res.exited && res.code == kTimedOut), "rank ", r, ": ", describe(results));
  }
}

}  // namespace

TEST_CASE("hang: a rank that skips a collective leaves the others waiting") {
  for (int n : {2, 4, 8}) {
    CAPTURE(n);
    std::vector<int> others;
    for (int r = 1; r < n; ++r) others.push_back(r);
    check_blocks(n, skip_on_rank0, others);
    check_times_out(n, skip_on_rank0, others, "waiting for ranks 0 to issue it");
  }
}

TEST_CASE("hang: count, dtype and root mismatches never match") {
  check_blocks(4, count_mismatch, {0, 1, 2, 3});
  check_times_out(4, count_mismatch, {0, 1, 2, 3}, "issued ncclAllReduce #3 (count");
  check_blocks(2, dtype_mismatch, {0, 1});
  check_times_out(2, dtype_mismatch, {0, 1}, "int64");
  check_blocks(3, root_mismatch, {0, 1, 2});
  check_times_out(3, root_mismatch, {0, 1, 2}, "root");
}

TEST_CASE("hang: a rank that exits is waited for") {
  const auto exits = [](int rank, ncclComm_t comm) -> ncclResult_t {
    if (rank == 1) _exit(0);
    float x = 1;
    return ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, comm, nullptr);
  };
  check_blocks(3, exits, {0, 2});
  check_times_out(3, exits, {0, 2}, "waiting for ranks 1 to issue it");
}

TEST_CASE("hang: ncclCommInitRank waits for every rank") {
  const auto body = [](int rank, const ncclUniqueId& id) {
    if (rank == 2) return 0;  // never joins
    ncclComm_t comm = nullptr;
    const ncclResult_t r = ncclCommInitRank(&comm, 3, id, rank);
    const std::string text = ncclGetLastError(nullptr);
    return r == ncclSystemError && comm == nullptr && text.find("ranks 2 to call ncclCommInitRank") != std::string::npos
               ? kTimedOut : 1;
  };
  auto results = run_ranks_until_asleep(3, [&](int rank, const ncclUniqueId& id) {
    reached(1);
    return body(rank, id);
  }, 1, {0, 1});
  CHECK_MESSAGE((!results[0].exited && !results[1].exited), describe(results));
  // Both wait for rank 2, which never comes: however far apart they start, both time out.
  results = run_ranks(3, body, std::chrono::seconds(60), {"HANGSHIM_FAKE_TIMEOUT=0.3"});
  CHECK_MESSAGE((results[0].code == kTimedOut && results[1].code == kTimedOut), describe(results));
}

TEST_CASE("hang: ncclCommAbort from another thread ends a blocked collective") {
  const auto results = run_ranks(2, [](int rank, const ncclUniqueId& id) {
    ncclComm_t comm;
    if (!expect_ok(ncclCommInitRank(&comm, 2, id, rank), rank, "init")) return 1;
    if (rank == 1) return 0;  // never joins the all_reduce
    ncclResult_t result = ncclSuccess;
    std::atomic<pid_t> tid{0};
    std::thread blocked([&] {
      float x = 1;
      tid.store(gettid());
      result = ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, comm, nullptr);
    });
    while (tid.load() == 0) std::this_thread::yield();
    wait_until_thread_asleep(tid.load());  // inside the all_reduce, waiting for rank 1
    const ncclResult_t abort = ncclCommAbort(comm);  // waits until the blocked call gave up
    blocked.join();
    return expect(abort == ncclSuccess && result == ncclInvalidUsage, rank, "abort ends the call") ? 0 : 1;
  }, std::chrono::seconds(60));
  CHECK_MESSAGE(all_succeeded(results), describe(results));
}
