// The ABI surface: every entry point the issue lists exists as ncclX and pncclX (one function),
// versions and error strings, and bad input answered with an error, never a crash or a hang.
#include "../nccl/unique_id.h"
#include "harness.h"

#include <doctest/doctest.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <sys/wait.h>

using namespace fakenccl_test;

namespace {

bool segment_exists(const std::string& name) {
  const int fd = shm_open(name.c_str(), O_RDONLY, 0);
  if (fd >= 0) close(fd);
  return fd >= 0;
}

// Waits until some rank created the job's shared-memory segment: an order decided by state, not
// by a head start a loaded machine can eat. The deadline only ends a run where nobody does.
bool wait_for_segment(const ncclUniqueId& id) {
  std::string name;
  if (fakenccl::segment_name_for_id(id, name) != ncclSuccess) return false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!segment_exists(name)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    usleep(1000);
  }
  return true;
}

// A fresh unique id in `id`, and the name of the shared-memory segment its job will use.
std::string new_job_segment(ncclUniqueId& id) {
  REQUIRE(ncclGetUniqueId(&id) == ncclSuccess);
  std::string name;
  REQUIRE(fakenccl::segment_name_for_id(id, name) == ncclSuccess);
  return name;
}

char state_of(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  FILE* f = std::fopen(path, "r");
  if (f == nullptr) return '?';
  char line[512] = {};
  const size_t n = std::fread(line, 1, sizeof line - 1, f);
  std::fclose(f);
  const char* close_paren = std::strrchr(line, ')');
  return n > 0 && close_paren != nullptr && close_paren[1] == ' ' ? close_paren[2] : '?';
}

}  // namespace

TEST_CASE("api: ncclX and pncclX are exported for every entry point") {
  static const char* const kNames[] = {
      "GetVersion", "GetUniqueId", "CommInitRank", "CommInitRankConfig", "CommInitAll", "CommSplit",
      "CommDestroy", "CommAbort", "CommFinalize", "CommCount", "CommUserRank", "CommCuDevice",
      "CommGetAsyncError", "GetErrorString", "GetLastError", "AllReduce", "Broadcast", "Bcast", "Reduce",
      "AllGather", "ReduceScatter", "AlltoAll", "Gather", "Scatter", "Send", "Recv", "GroupStart", "GroupEnd"};
  void* lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(lib != nullptr);
  for (const char* name : kNames) {
    CAPTURE(name);
    void* plain = dlsym(lib, (std::string("nccl") + name).c_str());
    void* profiled = dlsym(lib, (std::string("pnccl") + name).c_str());
    CHECK(plain != nullptr);
    CHECK(plain == profiled);
  }
  CHECK(dlsym(lib, "hangshimFakeNcclDescription") != nullptr);
  Dl_info info{};
  REQUIRE(dladdr(dlsym(lib, "ncclAllReduce"), &info) != 0);
  CHECK(std::string(info.dli_fname).find("libnccl.so.2") != std::string::npos);
  dlclose(lib);
}

TEST_CASE("api: version and error strings") {
  int version = 0;
  CHECK(ncclGetVersion(&version) == ncclSuccess);
  CHECK(version == NCCL_VERSION_CODE);
  CHECK(std::string(ncclGetErrorString(ncclSuccess)) == "no error");
  for (int code = ncclSuccess; code < ncclNumResults; ++code) {
    for (int other = code + 1; other < ncclNumResults; ++other) {
      CHECK(std::string(ncclGetErrorString(static_cast<ncclResult_t>(code))) !=
            ncclGetErrorString(static_cast<ncclResult_t>(other)));
    }
  }
  CHECK(ncclGetVersion(nullptr) == ncclInvalidArgument);
}

TEST_CASE("api: bad arguments are errors with a message") {
  const auto r = run_process([] {
    int failures = 0;
    auto is = [&](ncclResult_t got, ncclResult_t want, const char* what) {
      const bool ok = got == want && std::strlen(ncclGetLastError(nullptr)) > 0;
      if (!ok) std::fprintf(stderr, "%s: got %d (%s)\n", what, static_cast<int>(got), ncclGetLastError(nullptr));
      failures += ok ? 0 : 1;
    };
    ncclComm_t comms[2];
    if (!expect_ok(ncclCommInitAll(comms, 2, nullptr), 0, "init")) return 1;
    float x = 0;
    int not_a_comm = 0;
    is(ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, nullptr, nullptr), ncclInvalidArgument, "NULL comm");
    is(ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, reinterpret_cast<ncclComm_t>(&not_a_comm), nullptr),
       ncclInvalidArgument, "pointer that is no communicator");
    is(ncclAllReduce(&x, &x, 1, static_cast<ncclDataType_t>(42), ncclSum, comms[0], nullptr), ncclInvalidArgument, "datatype");
    is(ncclAllReduce(&x, &x, 1, ncclFloat32, static_cast<ncclRedOp_t>(17), comms[0], nullptr), ncclInvalidArgument, "redop");
    is(ncclBroadcast(&x, &x, 1, ncclFloat32, 2, comms[0], nullptr), ncclInvalidArgument, "root");
    is(ncclSend(&x, 1, ncclFloat32, 5, comms[0], nullptr), ncclInvalidArgument, "peer");
    is(ncclAllReduce(nullptr, &x, 1, ncclFloat32, ncclSum, comms[0], nullptr), ncclInvalidArgument, "NULL sendbuff");
    int count = 0;
    is(ncclCommCount(comms[0], nullptr), ncclInvalidArgument, "NULL out pointer");
    ncclUniqueId zero{};
    ncclComm_t c = nullptr;
    is(ncclCommInitRank(&c, 2, zero, 0), ncclInvalidArgument, "unique id not from ncclGetUniqueId");
    ncclUniqueId id;
    ncclGetUniqueId(&id);
    is(ncclCommInitRank(&c, 2, id, 2), ncclInvalidArgument, "rank >= nranks");
    is(ncclCommInitRank(&c, 1000, id, 0), ncclInvalidArgument, "too many ranks");
    ncclConfig_t config{};
    is(ncclCommInitRankConfig(&c, 1, id, 0, &config), ncclInvalidArgument, "config without NCCL_CONFIG_INITIALIZER");
    ncclCommDestroy(comms[0]);
    is(ncclCommCount(comms[0], &count), ncclInvalidArgument, "destroyed communicator");
    ncclCommDestroy(comms[1]);
    return failures;
  }, std::chrono::seconds(10));
  CHECK_MESSAGE((r.exited && r.code == 0), "exit ", r.code);
}

TEST_CASE("api: ranks that disagree on nranks or rank, and bad settings") {
  auto results = run_ranks(2, [](int rank, const ncclUniqueId& id) {
    ncclComm_t c = nullptr;
    if (rank == 1 && !wait_for_segment(id)) return 2;  // rank 0 creates the segment with nranks 2
    const ncclResult_t r = ncclCommInitRank(&c, rank == 0 ? 2 : 3, id, rank);
    return rank == 1 ? (r == ncclInvalidUsage ? 0 : 1) : 0;
    // Rank 0 gives up on rank 1 after the fake timeout: long enough that rank 1, once it saw the
    // segment, joins it before it goes, however loaded the machine.
  }, std::chrono::seconds(90), {"HANGSHIM_FAKE_TIMEOUT=5"});
  CHECK_MESSAGE((results[1].exited && results[1].code == 0), describe(results));

  results = run_ranks(2, [](int, const ncclUniqueId& id) {
    ncclComm_t c = nullptr;
    const ncclResult_t r = ncclCommInitRank(&c, 2, id, 0);  // both claim rank 0
    return r == ncclSuccess ? 0 : r == ncclInvalidUsage ? 5 : 1;
  }, std::chrono::seconds(5), {"HANGSHIM_FAKE_TIMEOUT=0.5"});
  CHECK_MESSAGE(((results[0].code == 5) != (results[1].code == 5)), describe(results));

  for (const char* setting : {"HANGSHIM_FAKE_TIMEOUT=abc", "HANGSHIM_FAKE_TIMEOUT=-1", "HANGSHIM_FAKE_CHUNK_BYTES=5"}) {
    CAPTURE(setting);
    results = run_ranks(1, [](int rank, const ncclUniqueId& id) {
      ncclComm_t c = nullptr;
      const ncclResult_t r = ncclCommInitRank(&c, 1, id, rank);
      return r == ncclInvalidArgument && std::strstr(ncclGetLastError(nullptr), "HANGSHIM_FAKE_") != nullptr ? 0 : 1;
    }, std::chrono::seconds(5), {setting});
    CHECK_MESSAGE(all_succeeded(results), describe(results));
  }
}

TEST_CASE("api: the shared-memory name exists until every rank joined, then never again") {
  ncclUniqueId id;
  const std::string name = new_job_segment(id);
  const auto exists = [&] { return segment_exists(name); };
  const auto r = run_process([&] {
    ncclComm_t comms[2];
    // ncclCommInitAll makes its own id; join by hand to look at the name in between. Rank 1
    // joins once we saw the name (a byte through a pipe): the order is decided by state.
    int gate[2];
    if (pipe(gate) != 0) return 2;
    pid_t child = fork();
    if (child == 0) {
      close(gate[1]);
      char byte = 0;
      if (read(gate[0], &byte, 1) != 1) _exit(1);
      ncclComm_t c;
      _exit(ncclCommInitRank(&c, 2, id, 1) == ncclSuccess ? 0 : 1);
    }
    close(gate[0]);
    (void)comms;
    std::thread joiner([&] {
      ncclComm_t c;
      ncclCommInitRank(&c, 2, id, 0);
    });
    // Rank 0 alone has joined: the name exists until rank 1 joins (which waits for us). The
    // deadline only ends a run where the name never shows.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!exists() && std::chrono::steady_clock::now() < deadline) usleep(1000);
    const bool during = exists();
    if (write(gate[1], "x", 1) != 1) return 2;
    close(gate[1]);
    joiner.join();
    int status = 0;
    waitpid(child, &status, 0);
    return during && !exists() && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
  }, std::chrono::seconds(90));
  CHECK_MESSAGE((r.exited && r.code == 0), "exit ", r.code);
}

TEST_CASE("api: segments of killed jobs are removed by the next ncclGetUniqueId") {
  ncclUniqueId id;
  const std::string name = new_job_segment(id);
  const auto exists = [&] { return segment_exists(name); };
  // Rank 0 of a 2-rank job joins and is killed while waiting for rank 1: once its segment exists
  // and it sleeps (not after a fixed time a loaded machine can spend before it got there). The
  // deadline only ends a run where it never waits.
  std::fflush(nullptr);
  const pid_t rank0 = fork();
  REQUIRE(rank0 >= 0);
  if (rank0 == 0) {
    ncclComm_t c;
    ncclCommInitRank(&c, 2, id, 0);
    _exit(0);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!(exists() && state_of(rank0) == 'S') && std::chrono::steady_clock::now() < deadline) usleep(1000);
  int status = 0;
  const bool waiting = exists() && state_of(rank0) == 'S' && waitpid(rank0, &status, WNOHANG) == 0;
  kill(rank0, SIGKILL);
  waitpid(rank0, &status, 0);
  CHECK_MESSAGE(waiting, "rank 0 never waited for rank 1 in ncclCommInitRank");
  CHECK(exists());
  ncclUniqueId next;
  REQUIRE(ncclGetUniqueId(&next) == ncclSuccess);
  CHECK_FALSE(exists());
}
