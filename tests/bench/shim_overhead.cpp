// Per-call cost of an NCCL collective, for the shim benchmark (tests/bench/shim_bench.sh):
// one single-rank communicator on the CPU stand-in, ncclAllReduce of one float on the NULL
// stream in a tight loop. Run with and without LD_PRELOAD=libhangshim.so; the difference is
// the shim's overhead. With --private LIB the functions come from dlsym(dlopen(LIB, RTLD_LOCAL))
// instead, as ctypes.CDLL(path) callers get them: through the shim's dlsym interposer, the
// per-library trampoline. Prints {"calls": N, "ns_per_call": X} (the best of several rounds, in CPU time of the calling thread).
#include <dlfcn.h>
#include <nccl.h>

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  long calls = 200000;
  int rounds = 5;
  const char* private_lib = nullptr;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--calls") == 0) calls = std::atol(argv[i + 1]);
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--private") == 0) private_lib = argv[i + 1];
  }
  auto all_reduce = &ncclAllReduce;
  if (private_lib != nullptr) {
    void* handle = dlopen(private_lib, RTLD_NOW | RTLD_LOCAL);
    void* fn = handle != nullptr ? dlsym(handle, "ncclAllReduce") : nullptr;
    if (fn == nullptr) {
      std::fprintf(stderr, "shim_overhead: no ncclAllReduce in %s\n", private_lib);
      return 1;
    }
    all_reduce = reinterpret_cast<decltype(all_reduce)>(fn);
  }
  ncclUniqueId id;
  ncclComm_t comm;
  if (ncclGetUniqueId(&id) != ncclSuccess || ncclCommInitRank(&comm, 1, id, 0) != ncclSuccess) {
    std::fprintf(stderr, "shim_overhead: cannot create a communicator (is the stand-in on LD_LIBRARY_PATH?)\n");
    return 1;
  }
  float value = 1.0f;
  double best = 1e300;
  for (int round = 0; round < rounds; ++round) {
    // CPU time of this thread: on a shared machine, wall time would count other processes.
    timespec start{}, end{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
    for (long i = 0; i < calls; ++i) {
      if (all_reduce(&value, &value, 1, ncclFloat, ncclSum, comm, nullptr) != ncclSuccess) {
        std::fprintf(stderr, "shim_overhead: ncclAllReduce failed\n");
        return 1;
      }
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end);
    double ns = static_cast<double>(end.tv_sec - start.tv_sec) * 1e9 + static_cast<double>(end.tv_nsec - start.tv_nsec);
    best = std::min(best, ns / static_cast<double>(calls));
  }
  ncclCommDestroy(comm);
  std::printf("{\"calls\": %ld, \"ns_per_call\": %.1f}\n", calls, best);
  return 0;
}
