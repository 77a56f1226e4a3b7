// A plain C++ NCCL program for the shim's tests (run_shim_case.py preloads libhangshim.so into
// it and checks the ledgers). It links the CPU stand-ins like a real program links NCCL and
// CUDA. Ranks are forked children that set RANK/WORLD_SIZE/LOCAL_RANK before their first NCCL
// call; the parent only makes unique ids (a query: it gets no ledger) and waits.
//
//   shim_driver results N          every collective kind; prints a digest of every result
//   shim_driver threads N T M      T threads per rank, each M all_reduces on its own comm
//   shim_driver fork               collectives, fork, the child uses NCCL on its own
//   shim_driver async N M          M all_reduces on a stand-in CUDA stream, then synchronize
//   shim_driver stall N            rank N-1 skips the 2nd all_reduce: the others stall in it
//   shim_driver stall N L FILE     ... and rank L is late: it calls ncclCommInitRank only once
//                                  FILE exists (the test makes it when the others have waited
//                                  past the limit there: a rank descheduled on a busy machine)
//   shim_driver exec               collectives, then exec's itself ("exec-child"), which does more
//   shim_driver signals M          SIGUSR1 storm while M collectives run
//   shim_driver init_all           ncclCommInitAll over 2 devices, one grouped all_reduce each;
//                                  then ncclCommInitRankConfig with a commName
//   shim_driver bcast N            ncclBcast (which NCCL forwards to its own ncclBroadcast
//                                  through its PLT), then one all_reduce; prints both results
//   shim_driver init_fail N F ERR  rank F's ncclCommInitRank fails (the stand-in's
//                                  HANGSHIM_FAKE_INIT_ERROR=ERR, set by that rank alone); it
//                                  prints what NCCL returned and ncclGetLastError's text on
//                                  stderr and exits 3; the other ranks wait in init for it
//   shim_driver simulate N         rank 0 alone simulates a group of two all_reduces
//                                  (ncclGroupSimulateEnd, a local call); then every rank runs
//                                  one real all_reduce; prints its result and the estimate
#include <cuda.h>
#include <nccl.h>
#include <signal.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "ranks.h"

namespace {

uint64_t digest(const void* data, size_t bytes) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < bytes; ++i) h = (h ^ static_cast<const unsigned char*>(data)[i]) * 1099511628211ull;
  return h;
}

int results(int rank, const std::vector<ncclUniqueId>& ids, int nranks) {
  ncclComm_t comm;
  if (!check(ncclCommInitRank(&comm, nranks, ids[0], rank), rank, "init")) return 1;
  const size_t n = 8;
  std::vector<float> send(n * nranks), recv(n * nranks);
  auto fill = [&](int salt) {
    for (size_t i = 0; i < send.size(); ++i) send[i] = static_cast<float>((rank + 1) * 10 + i + salt);
    std::fill(recv.begin(), recv.end(), 0.0f);
  };
  auto report = [&](const char* op) {
    std::printf("rank %d %s %016llx\n", rank, op, static_cast<unsigned long long>(digest(recv.data(), recv.size() * 4)));
  };
  bool ok = true;
  fill(1);
  ok = ok && check(ncclAllReduce(send.data(), recv.data(), n, ncclFloat, ncclSum, comm, nullptr), rank, "allreduce");
  report("all_reduce");
  fill(2);
  ok = ok && check(ncclBroadcast(send.data(), recv.data(), n, ncclFloat, 1 % nranks, comm, nullptr), rank, "broadcast");
  report("broadcast");
  fill(3);
  ok = ok && check(ncclReduce(send.data(), recv.data(), n, ncclFloat, ncclMax, 0, comm, nullptr), rank, "reduce");
  report("reduce");
  fill(4);
  ok = ok && check(ncclAllGather(send.data(), recv.data(), n, ncclFloat, comm, nullptr), rank, "allgather");
  report("all_gather");
  fill(5);
  ok = ok && check(ncclReduceScatter(send.data(), recv.data(), n, ncclFloat, ncclSum, comm, nullptr), rank, "reducescatter");
  report("reduce_scatter");
  fill(6);
  ok = ok && check(ncclAlltoAll(send.data(), recv.data(), n, ncclFloat, comm, nullptr), rank, "alltoall");
  report("all_to_all");
  fill(7);
  ok = ok && check(ncclGather(send.data(), recv.data(), n, ncclFloat, 0, comm, nullptr), rank, "gather");
  report("gather");
  fill(8);
  ok = ok && check(ncclScatter(send.data(), recv.data(), n, ncclFloat, 0, comm, nullptr), rank, "scatter");
  report("scatter");
  fill(9);
  int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
  ok = ok && check(ncclGroupStart(), rank, "group start");
  ok = ok && check(ncclSend(send.data(), n, ncclFloat, next, comm, nullptr), rank, "send");
  ok = ok && check(ncclRecv(recv.data(), n, ncclFloat, prev, comm, nullptr), rank, "recv");
  ok = ok && check(ncclGroupEnd(), rank, "group end");
  report("send_recv");
  ncclComm_t half;
  ok = ok && check(ncclCommSplit(comm, rank % 2, rank, &half, nullptr), rank, "split");
  fill(10);
  ok = ok && check(ncclAllReduce(send.data(), recv.data(), n, ncclFloat, ncclSum, half, nullptr), rank, "split allreduce");
  report("split_all_reduce");
  ok = ok && check(ncclCommDestroy(half), rank, "destroy half") && check(ncclCommDestroy(comm), rank, "destroy");
  return ok ? 0 : 1;
}

int bcast(int rank, const std::vector<ncclUniqueId>& ids, int nranks) {
  ncclComm_t comm;
  if (!check(ncclCommInitRank(&comm, nranks, ids[0], rank), rank, "init")) return 1;
  std::vector<float> data(16);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(rank * 100 + i);
  bool ok = check(ncclBcast(data.data(), data.size(), ncclFloat, 0, comm, nullptr), rank, "bcast");
  std::printf("rank %d bcast %016llx\n", rank, static_cast<unsigned long long>(digest(data.data(), data.size() * 4)));
  std::vector<float> sum(data.size());
  ok = ok && check(ncclAllReduce(data.data(), sum.data(), data.size(), ncclFloat, ncclSum, comm, nullptr), rank, "allreduce");
  std::printf("rank %d all_reduce %016llx\n", rank, static_cast<unsigned long long>(digest(sum.data(), sum.size() * 4)));
  ok = ok && check(ncclCommDestroy(comm), rank, "destroy");
  return ok ? 0 : 1;
}

int init_fail(int rank, const std::vector<ncclUniqueId>& ids, int nranks, int failing, const char* error) {
  if (rank == failing) setenv("HANGSHIM_FAKE_INIT_ERROR", error, 1);
  ncclComm_t comm;
  ncclResult_t r = ncclCommInitRank(&comm, nranks, ids[0], rank);
  if (r != ncclSuccess) {
    // The test's truth: what NCCL said to the program itself.
    std::fprintf(stderr, "shim_driver rank %d: ncclCommInitRank returned %d; ncclGetLastError: %s\n", rank,
                 static_cast<int>(r), ncclGetLastError(nullptr));
    std::fflush(stderr);
    return 3;
  }
  return check(ncclCommDestroy(comm), rank, "destroy") ? 0 : 1;
}

int simulate(int rank, const std::vector<ncclUniqueId>& ids, int nranks) {
  ncclComm_t comm;
  if (!check(ncclCommInitRank(&comm, nranks, ids[0], rank), rank, "init")) return 1;
  std::vector<float> data(8, static_cast<float>(rank + 1)), sum(8);
  bool ok = true;
  if (rank == 0) {
    ncclSimInfo_t info = NCCL_SIM_INFO_INITIALIZER;
    ok = ok && check(ncclGroupStart(), rank, "group start");
    ok = ok && check(ncclAllReduce(data.data(), sum.data(), data.size(), ncclFloat, ncclSum, comm, nullptr), rank, "allreduce");
    ok = ok && check(ncclAllReduce(data.data(), sum.data(), data.size(), ncclFloat, ncclSum, comm, nullptr), rank, "allreduce");
    ok = ok && check(ncclGroupSimulateEnd(&info), rank, "group simulate end");
    std::printf("rank %d simulated estimate %s\n", rank, info.estimatedTime > 0 ? "set" : "missing");
  }
  ok = ok && check(ncclAllReduce(data.data(), sum.data(), data.size(), ncclFloat, ncclSum, comm, nullptr), rank, "allreduce");
  std::printf("rank %d all_reduce %016llx\n", rank, static_cast<unsigned long long>(digest(sum.data(), sum.size() * 4)));
  ok = ok && check(ncclCommDestroy(comm), rank, "destroy");
  return ok ? 0 : 1;
}

int threads(int rank, const std::vector<ncclUniqueId>& ids, int nranks, int nthreads, int calls) {
  std::vector<ncclComm_t> comms(static_cast<size_t>(nthreads));
  // Communicators are created one after the other (NCCL init is collective per communicator);
  // the collectives then run concurrently, one thread per communicator.
  for (int t = 0; t < nthreads; ++t) {
    if (!check(ncclCommInitRank(&comms[t], nranks, ids[t], rank), rank, "init")) return 1;
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < nthreads; ++t) {
    workers.emplace_back([&, t] {
      std::vector<float> buf(16, 1.0f);
      for (int i = 0; i < calls; ++i) {
        ncclResult_t r = i % 5 == 4 ? ncclBroadcast(buf.data(), buf.data(), buf.size(), ncclFloat, 0, comms[t], nullptr)
                                    : ncclAllReduce(buf.data(), buf.data(), buf.size(), ncclFloat, ncclMax, comms[t], nullptr);
        if (r != ncclSuccess) failures.fetch_add(1);
      }
    });
  }
  for (auto& w : workers) w.join();
  for (auto c : comms) ncclCommDestroy(c);
  return failures.load() == 0 ? 0 : 1;
}

int single_rank_collectives(int count) {
  ncclUniqueId id;
  ncclComm_t comm;
  if (!check(ncclGetUniqueId(&id), 0, "id") || !check(ncclCommInitRank(&comm, 1, id, 0), 0, "init")) return 1;
  float v = 1.0f;
  for (int i = 0; i < count; ++i) {
    if (!check(ncclAllReduce(&v, &v, 1, ncclFloat, ncclSum, comm, nullptr), 0, "allreduce")) return 1;
  }
  return check(ncclCommDestroy(comm), 0, "destroy") ? 0 : 1;
}

int thread_count() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n;
}

int fork_case() {
  set_rank_env(0, 1);
  ncclUniqueId id;
  ncclComm_t comm;
  if (!check(ncclGetUniqueId(&id), 0, "id") || !check(ncclCommInitRank(&comm, 1, id, 0), 0, "init")) return 1;
  float v = 1.0f;
  for (int i = 0; i < 10; ++i) ncclAllReduce(&v, &v, 1, ncclFloat, ncclSum, comm, nullptr);
  pid_t child = fork();
  if (child == 0) {
    // A fork child inherits no thread: the parent's watchdog must not be here.
    if (thread_count() != 1) {
      std::fprintf(stderr, "shim_driver fork: the child starts with %d threads\n", thread_count());
      _exit(1);
    }
    _exit(single_rank_collectives(5));
  }
  int status = 0;
  waitpid(child, &status, 0);
  for (int i = 0; i < 10; ++i) ncclAllReduce(&v, &v, 1, ncclFloat, ncclSum, comm, nullptr);
  ncclCommDestroy(comm);
  std::printf("child %d\n", static_cast<int>(child));
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

bool cu(CUresult r, int rank, const char* what) {
  if (r == CUDA_SUCCESS) return true;
  std::fprintf(stderr, "shim_driver rank %d: %s failed: CUresult %d\n", rank, what, static_cast<int>(r));
  return false;
}

int async_case(int rank, const std::vector<ncclUniqueId>& ids, int nranks, int calls) {
  CUcontext ctx;
  CUstream stream;
  if (!cu(cuInit(0), rank, "cuInit") || !cu(cuDevicePrimaryCtxRetain(&ctx, rank), rank, "retain") ||
      !cu(cuCtxSetCurrent(ctx), rank, "set current") || !cu(cuStreamCreate(&stream, 0), rank, "stream")) {
    return 1;
  }
  ncclComm_t comm;
  if (!check(ncclCommInitRank(&comm, nranks, ids[0], rank), rank, "init")) return 1;
  std::vector<float> buf(64, 1.0f);
  for (int i = 0; i < calls; ++i) {
    if (!check(ncclAllReduce(buf.data(), buf.data(), buf.size(), ncclFloat, ncclSum, comm, stream), rank, "allreduce")) {
      return 1;
    }
  }
  if (!cu(cuStreamSynchronize(stream), rank, "synchronize")) return 1;
  usleep(300000);  // the watchdog polls the events (HANGSHIM_POLL_MS)
  return check(ncclCommDestroy(comm), rank, "destroy") ? 0 : 1;
}

int stall_case(int rank, const std::vector<ncclUniqueId>& ids, int nranks, int late_rank, const char* go_file) {
  if (rank == late_rank) {
    while (access(go_file, F_OK) != 0) usleep(10000);
  }
  ncclComm_t comm;
  if (!check(ncclCommInitRank(&comm, nranks, ids[0], rank), rank, "init")) return 1;
  float v = 1.0f;
  if (!check(ncclAllReduce(&v, &v, 1, ncclFloat, ncclSum, comm, nullptr), rank, "allreduce 1")) return 1;
  if (rank == nranks - 1) {
    for (;;) pause();  // never issues the second all_reduce; the test ends the job
  }
  // Blocks as a real hang does (or until HANGSHIM_FAKE_TIMEOUT, where set, turns it into an error).
  ncclResult_t r = ncclAllReduce(&v, &v, 1, ncclFloat, ncclSum, comm, nullptr);
  return r == ncclSuccess ? 1 : 0;
}

int signals_case(int calls) {
  static std::atomic<int> delivered{0};
  static std::atomic<int> on_watchdog{0};
  struct sigaction sa {};
  // Only async-signal-safe calls in the handler (open/read/close, no stdio: ThreadSanitizer
  // rightly flags fopen's malloc inside a signal handler).
  sa.sa_handler = [](int) {
    char path[64] = "/proc/self/task/";
    size_t n = std::strlen(path);
    char digits[16];
    size_t d = 0;
    for (unsigned tid = static_cast<unsigned>(gettid()); tid != 0 || d == 0; tid /= 10) digits[d++] = static_cast<char>('0' + tid % 10);
    while (d > 0) path[n++] = digits[--d];
    std::memcpy(path + n, "/comm", 6);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      char name[32] = {};
      if (read(fd, name, sizeof name - 1) > 0 && std::strncmp(name, "hangshim", 8) == 0) on_watchdog.fetch_add(1);
      close(fd);
    }
    delivered.fetch_add(1);
  };
  sigaction(SIGUSR1, &sa, nullptr);
  set_rank_env(0, 1);
  ncclUniqueId id;
  ncclComm_t comm;
  if (!check(ncclGetUniqueId(&id), 0, "id") || !check(ncclCommInitRank(&comm, 1, id, 0), 0, "init")) return 1;
  std::atomic<bool> stop{false};
  std::thread sender([&] {
    while (!stop.load()) {
      kill(getpid(), SIGUSR1);  // to the process: any thread that does not block it takes it
      usleep(200);
    }
  });
  // The storm must overlap the calls: on a loaded machine the sender may not run before the
  // calls are done (3000 calls take a few ms). So the calls start once a first signal arrived,
  // and go on past `calls` until 100 signals arrived during them (at most 100 times as many).
  for (int waited_ms = 0; delivered.load() == 0 && waited_ms < 30000; ++waited_ms) usleep(1000);
  const int before = delivered.load();
  float v = 1.0f;
  int failures = 0;
  for (int i = 0; i < calls || (delivered.load() - before < 100 && i < calls * 100); ++i) {
    failures += ncclAllReduce(&v, &v, 1, ncclFloat, ncclSum, comm, nullptr) != ncclSuccess;
  }
  const int during = delivered.load() - before;
  stop = true;
  sender.join();
  ncclCommDestroy(comm);
  std::printf("delivered %d (%d during the calls) on_watchdog %d failures %d\n", delivered.load(), during,
              on_watchdog.load(), failures);
  return failures == 0 && on_watchdog.load() == 0 && during > 0 ? 0 : 1;
}

int init_all_case() {
  set_rank_env(0, 1);
  ncclComm_t comms[2];
  int devices[2] = {0, 1};
  if (!check(ncclCommInitAll(comms, 2, devices), 0, "init all")) return 1;
  float a = 1.0f, b = 2.0f;
  bool ok = check(ncclGroupStart(), 0, "group start") &&
            check(ncclAllReduce(&a, &a, 1, ncclFloat, ncclSum, comms[0], nullptr), 0, "allreduce 0") &&
            check(ncclAllReduce(&b, &b, 1, ncclFloat, ncclSum, comms[1], nullptr), 0, "allreduce 1") &&
            check(ncclGroupEnd(), 0, "group end");
  ok = ok && a == 3.0f && b == 3.0f;
  for (auto c : comms) ncclCommDestroy(c);
  ncclUniqueId id;
  ncclComm_t named;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.commName = "trainer-dp";
  ok = ok && check(ncclGetUniqueId(&id), 0, "id") && check(ncclCommInitRankConfig(&named, 1, id, 0, &config), 0, "init config");
  ok = ok && check(ncclAllReduce(&a, &a, 1, ncclFloat, ncclSum, named, nullptr), 0, "allreduce named");
  ncclCommDestroy(named);
  return ok ? 0 : 1;
}

int exec_case(const char* self) {
  set_rank_env(0, 1);
  if (single_rank_collectives(3) != 0) return 1;
  execl(self, self, "exec-child", static_cast<char*>(nullptr));
  std::perror("shim_driver: exec");
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  auto arg = [&](int i, int fallback) { return argc > i ? std::atoi(argv[i]) : fallback; };
  if (mode == "results") {
    int n = arg(2, 3);
    return run_ranks(n, 1, [&](int rank, const auto& ids) { return results(rank, ids, n); });
  }
  if (mode == "threads") {
    int n = arg(2, 2), t = arg(3, 4), m = arg(4, 200);
    return run_ranks(n, t, [&](int rank, const auto& ids) { return threads(rank, ids, n, t, m); });
  }
  if (mode == "fork") return fork_case();
  if (mode == "async") {
    int n = arg(2, 2), m = arg(3, 20);
    return run_ranks(n, 1, [&](int rank, const auto& ids) { return async_case(rank, ids, n, m); });
  }
  if (mode == "stall") {
    int n = arg(2, 2), late_rank = argc > 4 ? arg(3, -1) : -1;
    const char* go_file = argc > 4 ? argv[4] : "";
    return run_ranks(n, 1, [&](int rank, const auto& ids) { return stall_case(rank, ids, n, late_rank, go_file); });
  }
  if (mode == "signals") return signals_case(arg(2, 2000));
  if (mode == "exec") return exec_case(argv[0]);
  if (mode == "init_all") return init_all_case();
  if (mode == "simulate") {
    int n = arg(2, 2);
    return run_ranks(n, 1, [n](int rank, const std::vector<ncclUniqueId>& ids) { return simulate(rank, ids, n); });
  }
  if (mode == "init_fail" && argc > 4) {
    int n = arg(2, 3), failing = arg(3, 1);
    const char* error = argv[4];
    return run_ranks(n, 1, [=](int rank, const std::vector<ncclUniqueId>& ids) {
      return init_fail(rank, ids, n, failing, error);
    });
  }
  if (mode == "bcast") {
    int n = arg(2, 2);
    return run_ranks(n, 1, [n](int rank, const std::vector<ncclUniqueId>& ids) { return bcast(rank, ids, n); });
  }
  if (mode == "exec-child") return single_rank_collectives(2);
  std::fprintf(stderr, "usage: shim_driver results|threads|fork|async|stall|signals|exec|init_all [args] (see the source)\n");
  return 2;
}
