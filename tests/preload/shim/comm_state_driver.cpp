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
//                                         polled with ncclCommGetAsyncError; then three
//                                         all_reduces and a group of two, each returning
//                                         ncclInProgress and polled until done
//   comm_state_driver nonblocking_absent N  as above, but rank N-1 never initializes: the
//                                         others poll ncclInProgress forever (the test ends it)
//   comm_state_driver nonblocking_skip N  as nonblocking, but rank N-1 skips all_reduce #2: the
//                                         others poll it in progress forever (the test ends it)
//   comm_state_driver nonblocking_init_error N  as nonblocking, but rank N-1's init fails in the
//                                         background (the stand-in's HANGSHIM_FAKE_INIT_ERROR=
//                                         ncclSystemError): its poll says so, it prints NCCL's
//                                         text and exits 3; the others poll forever
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

// Polls ncclCommGetAsyncError until the communicator is no longer in progress.
ncclResult_t poll_until_done(ncclComm_t comm, int rank, long* polls) {
  ncclResult_t state = ncclInProgress;
  while (state == ncclInProgress) {
    if (!check(ncclCommGetAsyncError(comm, &state), rank, "get async error")) return ncclSystemError;
    ++*polls;
    if (state == ncclInProgress) usleep(1000);
  }
  return state;
}

// One nonblocking call: ncclInProgress (or ncclSuccess), then polled until done.
bool nonblocking_call(ncclComm_t comm, int rank, const char* what, ncclResult_t r) {
  std::printf("rank %d: %s returned %d\n", rank, what, static_cast<int>(r));
  std::fflush(stdout);
  if (r != ncclSuccess && r != ncclInProgress) return false;
  long polls = 0;
  return check(poll_until_done(comm, rank, &polls), rank, what);
}

int nonblocking_case(int rank, const std::vector<ncclUniqueId>& ids, int nranks, bool absent, bool skip,
                     bool init_error) {
  if (absent && rank == nranks - 1) {
    std::printf("rank %d: never initializes\n", rank);
    std::fflush(stdout);
    for (;;) pause();
  }
  if (init_error && rank == nranks - 1) setenv("HANGSHIM_FAKE_INIT_ERROR", "ncclSystemError", 1);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  ncclResult_t r = ncclCommInitRankConfig(&comm, nranks, ids[0], rank, &config);
  std::printf("rank %d: init returned %d\n", rank, static_cast<int>(r));
  std::fflush(stdout);
  if (r != ncclSuccess && r != ncclInProgress) return 1;
  long polls = 0;
  ncclResult_t state = poll_until_done(comm, rank, &polls);
  std::printf("rank %d: async state %d after %ld polls\n", rank, static_cast<int>(state), polls);
  if (state != ncclSuccess) {
    std::printf("rank %d: init failed: %s\n", rank, ncclGetLastError(comm));
    std::fflush(stdout);
    return 3;
  }
  float v = 1.0f;
  for (int i = 1; i <= 3; ++i) {
    if (skip && rank == nranks - 1 && i == 2) {
      std::printf("rank %d: skips all_reduce 2\n", rank);
      std::fflush(stdout);
      for (;;) pause();
    }
    std::string what = "all_reduce " + std::to_string(i);
    if (!nonblocking_call(comm, rank, what.c_str(), ncclAllReduce(&v, &v, 1, ncclFloat, ncclSum, comm, nullptr))) return 1;
  }
  float a = 1.0f, b = 2.0f;
  ncclGroupStart();
  ncclAllReduce(&a, &a, 1, ncclFloat, ncclSum, comm, nullptr);
  ncclAllReduce(&b, &b, 1, ncclFloat, ncclSum, comm, nullptr);
  if (!nonblocking_call(comm, rank, "group", ncclGroupEnd())) return 1;
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
  if (mode.rfind("nonblocking", 0) == 0) {
    bool absent = mode == "nonblocking_absent";
    bool skip = mode == "nonblocking_skip";
    bool init_error = mode == "nonblocking_init_error";
    if (mode == "nonblocking" || absent || skip || init_error) {
      return run_ranks(n, 1, [&](int rank, const auto& ids) { return nonblocking_case(rank, ids, n, absent, skip, init_error); });
    }
  }
  std::fprintf(stderr, "usage: comm_state_driver window|window_skip|revoke|nonblocking|nonblocking_absent|"
                       "nonblocking_skip|nonblocking_init_error N\n");
  return 2;
}
