// A C++ NCCL program for the shim's tests of communicator state beyond plain collectives (run
// by run_comm_state_case.py with libhangshim.so preloaded): memory windows, revoke, and
// nonblocking init. Ranks are forked children (ranks.h). Each rank prints what it saw on
// stdout, one "rank R: ..." line per fact, which the test compares with the ledgers.
//
//   comm_state_driver window N            register a window, all_reduce, deregister, destroy
//   comm_state_driver window_skip N       rank N-1 skips the registration and goes on to the
//                                         all_reduce: the job hangs (the test ends it)
//   comm_state_driver revoke N            rank N-1 skips the second all_reduce; the others,
//                                         blocked in it, revoke the communicator from another
//                                         thread (it returns an error), then every rank
//                                         revokes and destroys and exits 0
//   comm_state_driver nonblocking N       config.blocking = 0: init returns ncclInProgress,
//                                         polled with ncclCommGetAsyncError; then all_reduce
//   comm_state_driver nonblocking_absent N  as above, but rank N-1 never initializes: the
//                                         others poll ncclInProgress forever (the test ends it)
#include <nccl.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "ranks.h"

namespace {

int window_case(int rank, const std::vector<ncclUniqueId>& ids, int nranks, bool skip) {
  ncclComm_t comm;
  if (!check(ncclCommInitRank(&comm, nranks, ids[0], rank), rank, "init")) return 1;
  std::vector<float> buf(1024, 1.0f);
  ncclWindow_t win = nullptr;
  if (skip && rank == nranks - 1) {
    std::printf("rank %d: skips window_register\n", rank);
  } else {
    std::printf("rank %d: window_register\n", rank);
    std::fflush(stdout);
    if (!check(ncclCommWindowRegister(comm, buf.data(), buf.size() * sizeof(float), &win, 0), rank, "register")) return 1;
  }
  std::printf("rank %d: all_reduce\n", rank);
  std::fflush(stdout);
  if (!check(ncclAllReduce(buf.data(), buf.data(), buf.size(), ncclFloat, ncclSum, comm, nullptr), rank, "allreduce")) return 1;
  if (!check(ncclCommWindowDeregister(comm, win), rank, "deregister")) return 1;
  std::printf("rank %d: done\n", rank);
  return check(ncclCommDestroy(comm), rank, "destroy") ? 0 : 1;
}

// The calling thread's state letter in /proc ('S': asleep, here in the stand-in's futex wait).
char thread_state(pid_t tid) {
  std::ifstream f("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string text;
  std::getline(f, text);
  size_t close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() ? text[close + 2] : '?';
}

int revoke_case(int rank, const std::vector<ncclUniqueId>& ids, int nranks) {
  ncclComm_t comm;
  if (!check(ncclCommInitRank(&comm, nranks, ids[0], rank), rank, "init")) return 1;
  float v = 1.0f;
  if (!check(ncclAllReduce(&v, &v, 1, ncclFloat, ncclSum, comm, nullptr), rank, "allreduce 1")) return 1;
  if (rank != nranks - 1) {
    // Revoke once the main thread is asleep inside all_reduce #2 (it waits for the rank that
    // skipped it): decided from the thread's state, not from a time.
    std::atomic<pid_t> main_tid{0};
    std::thread revoker([&] {
      while (main_tid.load() == 0 || thread_state(main_tid.load()) != 'S') usleep(1000);
      ncclResult_t r = ncclCommRevoke(comm, NCCL_REVOKE_DEFAULT);
      std::printf("rank %d: revoke %s\n", rank, ncclGetErrorString(r));
      std::fflush(stdout);
    });
    main_tid.store(gettid());
    ncclResult_t r = ncclAllReduce(&v, &v, 1, ncclFloat, ncclSum, comm, nullptr);
    std::printf("rank %d: all_reduce 2 returned %d\n", rank, static_cast<int>(r));
    revoker.join();
  } else {
    std::printf("rank %d: skips all_reduce 2\n", rank);
    ncclResult_t r = ncclCommRevoke(comm, NCCL_REVOKE_DEFAULT);
    std::printf("rank %d: revoke %s\n", rank, ncclGetErrorString(r));
  }
  std::fflush(stdout);
  return check(ncclCommDestroy(comm), rank, "destroy") ? 0 : 1;
}

int nonblocking_case(int rank, const std::vector<ncclUniqueId>& ids, int nranks, bool absent) {
  if (absent && rank == nranks - 1) {
    std::printf("rank %d: never initializes\n", rank);
    std::fflush(stdout);
    for (;;) pause();
  }
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  ncclResult_t r = ncclCommInitRankConfig(&comm, nranks, ids[0], rank, &config);
  std::printf("rank %d: init returned %d\n", rank, static_cast<int>(r));
  std::fflush(stdout);
  if (r != ncclSuccess && r != ncclInProgress) return 1;
  ncclResult_t state = ncclInProgress;
  long polls = 0;
  while (state == ncclInProgress) {
    if (!check(ncclCommGetAsyncError(comm, &state), rank, "get async error")) return 1;
    ++polls;
    if (state == ncclInProgress) usleep(1000);
  }
  std::printf("rank %d: async state %d after %ld polls\n", rank, static_cast<int>(state), polls);
  if (state != ncclSuccess) return 1;
  float v = 1.0f;
  if (!check(ncclAllReduce(&v, &v, 1, ncclFloat, ncclSum, comm, nullptr), rank, "allreduce")) return 1;
  std::printf("rank %d: done\n", rank);
  std::fflush(stdout);
  return check(ncclCommDestroy(comm), rank, "destroy") ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  int n = argc > 2 ? std::atoi(argv[2]) : 2;
  setvbuf(stdout, nullptr, _IOLBF, 0);
  if (mode == "window" || mode == "window_skip") {
    bool skip = mode == "window_skip";
    return run_ranks(n, 1, [&](int rank, const auto& ids) { return window_case(rank, ids, n, skip); });
  }
  if (mode == "revoke") return run_ranks(n, 1, [&](int rank, const auto& ids) { return revoke_case(rank, ids, n); });
  if (mode == "nonblocking" || mode == "nonblocking_absent") {
    bool absent = mode == "nonblocking_absent";
    return run_ranks(n, 1, [&](int rank, const auto& ids) { return nonblocking_case(rank, ids, n, absent); });
  }
  std::fprintf(stderr, "usage: comm_state_driver window|window_skip|revoke|nonblocking|nonblocking_absent N\n");
  return 2;
}
