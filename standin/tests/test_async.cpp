// Asynchronous mode: a collective given a stream returns at once and runs on the stream's worker;
// events recorded after it complete when it does (the shim's completion tracking), a NULL-stream
// call orders after earlier stream work, and failures surface through ncclCommGetAsyncError.
#include "harness.h"

#include <cuda.h>
#include <doctest/doctest.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace fakenccl_test;
using Clock = std::chrono::steady_clock;

namespace {

bool cu_ok(CUresult r, int rank, const char* call) {
  if (r == CUDA_SUCCESS) return true;
  const char* text = nullptr;
  cuGetErrorString(r, &text);
  std::fprintf(stderr, "rank %d: %s: %s\n", rank, call, text != nullptr ? text : "?");
  return false;
}

// Rank 1 waits at the gate until rank 0 opens it: one byte through a pipe, an order decided by
// state, not by a head start a loaded machine can eat. Each rank (a process of its own) keeps
// its end: rank 0 the writing one, rank 1 the reading one.
struct Gate {
  int fds[2] = {-1, -1};
  Gate() { REQUIRE(pipe(fds) == 0); }
  ~Gate() {
    close(fds[0]);
    close(fds[1]);
  }
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;
  void keep_end_of(int rank) { close(fds[rank == 0 ? 0 : 1]); }
  bool open() { return write(fds[1], "g", 1) == 1; }
  bool pass() {
    char byte = 0;
    return read(fds[0], &byte, 1) == 1;
  }
};

// torch.cuda.set_device(rank) and a stream, through the stand-in driver.
bool setup_device(int rank, CUstream* stream, CUevent* event) {
  CUcontext ctx = nullptr;
  return cu_ok(cuInit(0), rank, "cuInit") && cu_ok(cuDevicePrimaryCtxRetain(&ctx, rank), rank, "retain") &&
         cu_ok(cuCtxSetCurrent(ctx), rank, "set current") && cu_ok(cuStreamCreate(stream, 0), rank, "stream") &&
         cu_ok(cuEventCreate(event, CU_EVENT_DISABLE_TIMING), rank, "event");
}

// setup_device, then this rank's place in a blocking communicator of two ranks.
bool setup_two_ranks(int rank, const ncclUniqueId& id, CUstream* stream, CUevent* event, ncclComm_t* comm) {
  return setup_device(rank, stream, event) && expect_ok(ncclCommInitRank(comm, 2, id, rank), rank, "init");
}

long ms_since(Clock::time_point t) {
  return static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count());
}

}  // namespace

TEST_CASE("async: the call returns at once, the event completes with the collective") {
  // Rank 1 stays away until rank 0's call returned and rank 0 saw its event pending: a byte
  // through this pipe, not a head start a loaded machine can eat. A call that waited for rank 1
  // would never return, and the ranks would reach run_ranks' deadline.
  Gate gate;
  const auto results = run_ranks(2, [&](int rank, const ncclUniqueId& id) {
    gate.keep_end_of(rank);
    CUstream stream;
    CUevent event;
    ncclComm_t comm;
    if (!setup_two_ranks(rank, id, &stream, &event, &comm)) return 1;
    int device = -1;
    ncclCommCuDevice(comm, &device);
    if (!expect(device == rank, rank, "ncclCommCuDevice is the current context's device")) return 1;
    if (rank == 1) {
      if (!expect(gate.pass(), rank, "rank 0 opened the gate")) return 1;
      usleep(600 * 1000);  // after rank 0's start: its completion waits at least this long
    }
    std::vector<float> data(1000, static_cast<float>(rank + 1));
    const auto start = Clock::now();
    if (!expect_ok(ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat32, ncclSum, comm,
                                 reinterpret_cast<cudaStream_t>(stream)), rank, "allreduce")) return 1;
    if (!cu_ok(cuEventRecord(event, stream), rank, "record")) return 1;
    if (rank == 0) {
      // Here the call returned before rank 1 arrived: rank 1 waits for the byte written below.
      const bool pending = expect(cuEventQuery(event) == CUDA_ERROR_NOT_READY, rank, "event pending while rank 1 is away") &&
                           expect(cuStreamQuery(stream) == CUDA_ERROR_NOT_READY, rank, "stream busy");
      if (!expect(gate.open(), rank, "gate opened")) return 1;
      if (!pending) return 1;
    }
    if (!cu_ok(cuEventSynchronize(event), rank, "event sync")) return 1;
    if (!expect(cuEventQuery(event) == CUDA_SUCCESS, rank, "event complete")) return 1;
    if (!expect(data == std::vector<float>(1000, 3.0f), rank, "sum")) return 1;
    if (rank == 0 && !expect(ms_since(start) >= 300, rank, "completion waited for rank 1")) return 1;

    // Several calls queue in order; a NULL-stream call runs after them.
    std::vector<int> seq(3);
    for (int i = 0; i < 3; ++i) {
      seq[static_cast<std::size_t>(i)] = (i + 1) * (rank + 1);
      if (!expect_ok(ncclAllReduce(&seq[static_cast<std::size_t>(i)], &seq[static_cast<std::size_t>(i)], 1, ncclInt32,
                                   ncclSum, comm, reinterpret_cast<cudaStream_t>(stream)), rank, "queued allreduce")) return 1;
    }
    int sync_value = 10;
    if (!expect_ok(ncclAllReduce(&sync_value, &sync_value, 1, ncclInt32, ncclSum, comm, nullptr), rank, "NULL stream")) return 1;
    if (!expect(sync_value == 20 && seq == std::vector<int>{3, 6, 9}, rank, "ordered results")) return 1;
    if (!cu_ok(cuStreamSynchronize(stream), rank, "stream sync")) return 1;
    ncclCommDestroy(comm);
    return 0;
  }, std::chrono::seconds(90));
  CHECK_MESSAGE(all_succeeded(results), describe(results));
}

TEST_CASE("async: a hung collective keeps its event pending, the process still exits cleanly") {
  const auto results = run_ranks(2, [](int rank, const ncclUniqueId& id) {
    CUstream stream;
    CUevent event;
    ncclComm_t comm;
    if (!setup_two_ranks(rank, id, &stream, &event, &comm)) return 1;
    if (rank == 1) return 0;  // never issues the collective
    float x = 1;
    if (!expect_ok(ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, comm, reinterpret_cast<cudaStream_t>(stream)), rank, "allreduce")) return 1;
    cuEventRecord(event, stream);
    for (int i = 0; i < 10; ++i) {
      usleep(30 * 1000);
      if (!expect(cuEventQuery(event) == CUDA_ERROR_NOT_READY, rank, "still pending")) return 1;
    }
    std::exit(4);  // a full exit() with the stream worker blocked in the collective
  }, std::chrono::seconds(90));  // only a rank that never ends reaches it
  CHECK_MESSAGE((results[0].exited && results[0].code == 4), describe(results));
}

TEST_CASE("async: with HANGSHIM_FAKE_TIMEOUT the stream finishes and the error is asynchronous") {
  const auto results = run_ranks(2, [](int rank, const ncclUniqueId& id) {
    CUstream stream;
    CUevent event;
    ncclComm_t comm;
    if (!setup_two_ranks(rank, id, &stream, &event, &comm)) return 1;
    if (rank == 1) return 0;
    float x = 1;
    if (!expect_ok(ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, comm, reinterpret_cast<cudaStream_t>(stream)), rank, "allreduce")) return 1;
    if (!cu_ok(cuStreamSynchronize(stream), rank, "stream sync")) return 1;
    ncclResult_t async = ncclSuccess;
    ncclCommGetAsyncError(comm, &async);
    const std::string text = ncclGetLastError(comm);
    if (!expect(async == ncclSystemError && text.find("timed out") != std::string::npos, rank, "async error: " + text)) return 1;
    return expect_ok(ncclCommAbort(comm), rank, "abort") ? 0 : 1;
  }, std::chrono::seconds(90), {"HANGSHIM_FAKE_TIMEOUT=0.3"});
  CHECK_MESSAGE(all_succeeded(results), describe(results));
}

TEST_CASE("async: a group spanning two streams makes both wait") {
  const auto result = run_process([] {
    CUstream s1, s2;
    CUevent e2;
    if (!setup_device(0, &s1, &e2) || !cu_ok(cuStreamCreate(&s2, 0), 0, "stream 2")) return 1;
    ncclComm_t comms[2];
    if (!expect_ok(ncclCommInitAll(comms, 2, nullptr), 0, "init all")) return 1;
    int a = 1, b = 2;
    ncclGroupStart();
    ncclAllReduce(&a, &a, 1, ncclInt32, ncclSum, comms[0], reinterpret_cast<cudaStream_t>(s1));
    ncclAllReduce(&b, &b, 1, ncclInt32, ncclSum, comms[1], reinterpret_cast<cudaStream_t>(s2));
    if (!expect_ok(ncclGroupEnd(), 0, "group end")) return 1;
    cuEventRecord(e2, s2);
    if (!cu_ok(cuEventSynchronize(e2), 0, "event on the second stream")) return 1;
    // The event on the second stream completing means the whole group ran.
    return expect(a == 3 && b == 3, 0, "both results") ? 0 : 1;
  }, std::chrono::seconds(90));  // only a rank that never ends reaches it
  CHECK_MESSAGE((result.exited && result.code == 0), "exit ", result.code);
}

namespace {

// Polls ncclCommGetAsyncError until `comm` is no longer in progress: ncclSuccess when the last
// call is done, its error otherwise (or the poll's own failure).
ncclResult_t poll_until_done(ncclComm_t comm, int rank) {
  ncclResult_t state = ncclInProgress;
  while (state == ncclInProgress) {
    if (!expect_ok(ncclCommGetAsyncError(comm, &state), rank, "ncclCommGetAsyncError")) return ncclSystemError;
    if (state == ncclInProgress) usleep(1000);
  }
  return state;
}

// A nonblocking communicator (config.blocking = 0), polled until it is ready.
bool init_nonblocking(ncclComm_t* comm, int nranks, const ncclUniqueId& id, int rank) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclResult_t r = ncclCommInitRankConfig(comm, nranks, id, rank, &config);
  if (!expect(r == ncclInProgress || r == ncclSuccess, rank, "nonblocking init returns ncclInProgress")) return false;
  return expect_ok(poll_until_done(*comm, rank), rank, "the nonblocking init");
}

}  // namespace

TEST_CASE("async: on a nonblocking communicator a collective is in progress until ncclCommGetAsyncError says done") {
  // Rank 1 issues its first all_reduce only after rank 0 tried a second call while its first
  // was still in progress (a byte through this pipe).
  Gate gate;
  const auto results = run_ranks(2, [&](int rank, const ncclUniqueId& id) {
    gate.keep_end_of(rank);
    ncclComm_t comm;
    if (!init_nonblocking(&comm, 2, id, rank)) return 1;
    for (int i = 0; i < 3; ++i) {
      float x = static_cast<float>(rank + 1);
      if (rank == 1 && i == 0 && !expect(gate.pass(), rank, "rank 0 let rank 1 go")) return 1;
      ncclResult_t r = ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, comm, nullptr);
      if (!expect(r == ncclInProgress, rank, "a nonblocking all_reduce returns ncclInProgress")) return 1;
      if (rank == 0 && i == 0) {
        // As NCCL's ncclCommEnsureReady: no new work before the last call is done.
        float y = 0;
        r = ncclAllReduce(&y, &y, 1, ncclFloat32, ncclSum, comm, nullptr);
        if (!expect(r == ncclInvalidArgument, rank, "a call while in progress is refused")) return 1;
        if (!expect(gate.open(), rank, "let rank 1 go")) return 1;
      }
      if (!expect_ok(poll_until_done(comm, rank), rank, "the all_reduce")) return 1;
      if (!expect(x == 3.0f, rank, "the sum arrived")) return 1;
    }
    // A group ends in progress the same way.
    float a = 1, b = 2;
    ncclGroupStart();
    ncclAllReduce(&a, &a, 1, ncclFloat32, ncclSum, comm, nullptr);
    ncclAllReduce(&b, &b, 1, ncclFloat32, ncclSum, comm, nullptr);
    if (!expect(ncclGroupEnd() == ncclInProgress, rank, "ncclGroupEnd returns ncclInProgress")) return 1;
    ncclResult_t state = poll_until_done(comm, rank);
    if (!expect(state == ncclSuccess && a == 2.0f && b == 4.0f, rank, "the group's sums arrived")) return 1;
    return expect_ok(ncclCommDestroy(comm), rank, "destroy") ? 0 : 1;
  }, std::chrono::seconds(60));
  CHECK_MESSAGE(all_succeeded(results), describe(results));
}

TEST_CASE("async: a nonblocking collective one rank skips stays in progress, and abort ends it") {
  const auto results = run_ranks(2, [](int rank, const ncclUniqueId& id) {
    ncclComm_t comm;
    if (!init_nonblocking(&comm, 2, id, rank)) return 1;
    if (rank == 1) return 0;  // never issues the collective
    float x = 1;
    if (!expect(ncclAllReduce(&x, &x, 1, ncclFloat32, ncclSum, comm, nullptr) == ncclInProgress, rank, "in progress")) return 1;
    for (int i = 0; i < 10; ++i) {
      usleep(20 * 1000);
      ncclResult_t state = ncclSuccess;
      ncclCommGetAsyncError(comm, &state);
      if (!expect(state == ncclInProgress, rank, "still in progress")) return 1;
    }
    return expect_ok(ncclCommAbort(comm), rank, "abort") ? 0 : 1;
  }, std::chrono::seconds(60));
  CHECK_MESSAGE(all_succeeded(results), describe(results));
}
