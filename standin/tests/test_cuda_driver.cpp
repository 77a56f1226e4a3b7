// The stand-in driver on its own: initialization and context rules, in-order stream execution,
// event semantics (including the legacy default stream), handles, and cuGetProcAddress.
#include "harness.h"

#include <cuda.h>
#include <doctest/doctest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

using namespace fakenccl_test;

namespace {

// A host function that waits until its gate opens (a long-running "kernel").
struct Gate {
  std::atomic<bool> open{false};
  static void wait(void* self) {
    while (!static_cast<Gate*>(self)->open.load()) usleep(1000);
  }
};

struct Log {
  std::mutex mutex;
  std::vector<int> order;
};
struct Entry {
  Log* log;
  int value;
  static void append(void* self) {
    auto* e = static_cast<Entry*>(self);
    usleep(2000);
    std::lock_guard lock(e->log->mutex);
    e->log->order.push_back(e->value);
  }
};

int check(bool ok, const char* what) { return expect(ok, 0, what) ? 0 : 1; }

}  // namespace

TEST_CASE("driver: initialization and context rules") {
  const auto r = run_process([] {
    CUstream s;
    CUevent e;
    int failures = check(cuStreamCreate(&s, 0) == CUDA_ERROR_NOT_INITIALIZED, "calls before cuInit fail");
    failures += check(cuInit(1) == CUDA_ERROR_INVALID_VALUE, "cuInit flags must be 0");
    failures += check(cuInit(0) == CUDA_SUCCESS, "cuInit");
    failures += check(cuStreamCreate(&s, 0) == CUDA_ERROR_INVALID_CONTEXT, "streams need a current context");
    failures += check(cuEventCreate(&e, 0) == CUDA_ERROR_INVALID_CONTEXT, "events need a current context");
    CUcontext ctx = nullptr;
    failures += check(cuDevicePrimaryCtxRetain(&ctx, 3) == CUDA_SUCCESS, "retain device 3");
    int bogus = 0;
    failures += check(cuCtxSetCurrent(reinterpret_cast<CUcontext>(&bogus)) == CUDA_ERROR_INVALID_CONTEXT, "bad context");
    failures += check(cuCtxSetCurrent(ctx) == CUDA_SUCCESS, "set current");
    CUdevice dev = -1;
    failures += check(cuCtxGetDevice(&dev) == CUDA_SUCCESS && dev == 3, "current device");
    int count = 0;
    failures += check(cuDeviceGetCount(&count) == CUDA_SUCCESS && count >= 8, "device count");
    failures += check(cuDeviceGet(&dev, count) == CUDA_ERROR_INVALID_DEVICE, "device ordinal range");
    failures += check(cuStreamCreate(&s, 0) == CUDA_SUCCESS && cuEventCreate(&e, 0) == CUDA_SUCCESS, "create");
    const char* text = nullptr;
    failures += check(cuGetErrorString(CUDA_ERROR_NOT_READY, &text) == CUDA_SUCCESS && std::string(text) == "device not ready",
                      "error string");
    failures += check(cuGetErrorName(static_cast<CUresult>(123456), &text) == CUDA_ERROR_INVALID_VALUE && text == nullptr,
                      "unknown error code");
    return failures;
  }, std::chrono::seconds(10));
  CHECK_MESSAGE((r.exited && r.code == 0), "exit ", r.code);
}

TEST_CASE("driver: streams run host work in order, events and the legacy stream") {
  const auto r = run_process([] {
    CUcontext ctx;
    cuInit(0);
    cuDevicePrimaryCtxRetain(&ctx, 0);
    cuCtxSetCurrent(ctx);
    CUstream blocking, nonblocking, waiter;
    CUevent on_blocking, on_legacy, on_nonblocking;
    cuStreamCreate(&blocking, 0);
    cuStreamCreate(&nonblocking, CU_STREAM_NON_BLOCKING);
    cuStreamCreate(&waiter, 0);
    cuEventCreate(&on_blocking, 0);
    cuEventCreate(&on_legacy, 0);
    cuEventCreate(&on_nonblocking, 0);
    int failures = 0;

    Log log;
    Entry entries[3] = {{&log, 1}, {&log, 2}, {&log, 3}};
    for (Entry& e : entries) cuLaunchHostFunc(blocking, Entry::append, &e);
    failures += check(cuStreamSynchronize(blocking) == CUDA_SUCCESS && log.order == std::vector<int>{1, 2, 3},
                      "host functions ran in order before cuStreamSynchronize returned");

    Gate gate_a, gate_b;
    cuLaunchHostFunc(blocking, Gate::wait, &gate_a);
    cuLaunchHostFunc(nonblocking, Gate::wait, &gate_b);
    cuEventRecord(on_blocking, blocking);
    cuEventRecord(on_legacy, nullptr);  // covers blocking streams only
    cuEventRecord(on_nonblocking, nonblocking);
    Entry after{&log, 4};
    cuStreamWaitEvent(waiter, on_blocking, 0);
    cuLaunchHostFunc(waiter, Entry::append, &after);
    usleep(20 * 1000);
    failures += check(cuEventQuery(on_blocking) == CUDA_ERROR_NOT_READY, "event behind running work is pending");
    failures += check(cuEventQuery(on_legacy) == CUDA_ERROR_NOT_READY, "legacy-stream event waits for blocking streams");
    failures += check(cuStreamQuery(waiter) == CUDA_ERROR_NOT_READY, "cuStreamWaitEvent holds the waiting stream");
    gate_a.open = true;
    failures += check(cuEventSynchronize(on_legacy) == CUDA_SUCCESS, "legacy event completes");
    failures += check(cuEventQuery(on_nonblocking) == CUDA_ERROR_NOT_READY,
                      "a non-blocking stream is not covered by the legacy stream");
    failures += check(cuStreamSynchronize(waiter) == CUDA_SUCCESS && log.order.back() == 4, "waiter ran after the event");
    gate_b.open = true;
    failures += check(cuEventSynchronize(on_nonblocking) == CUDA_SUCCESS, "non-blocking stream done");

    CUevent never;
    cuEventCreate(&never, 0);
    failures += check(cuEventQuery(never) == CUDA_SUCCESS, "an event never recorded is complete");
    failures += check(cuEventDestroy(never) == CUDA_SUCCESS && cuEventQuery(never) == CUDA_ERROR_INVALID_HANDLE,
                      "destroyed event handle");
    // Destroying a stream with queued work: the work still runs.
    Gate gate_c;
    cuLaunchHostFunc(waiter, Gate::wait, &gate_c);
    Entry last{&log, 5};
    cuLaunchHostFunc(waiter, Entry::append, &last);
    failures += check(cuStreamDestroy(waiter) == CUDA_SUCCESS, "destroy with pending work");
    failures += check(cuStreamQuery(waiter) == CUDA_ERROR_INVALID_HANDLE, "destroyed stream handle");
    gate_c.open = true;
    // Until the queued work ran; the deadline only ends a run where it never does.
    const auto last_ran = [&] {
      std::lock_guard lock(log.mutex);
      return log.order.back() == 5;
    };
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!last_ran() && std::chrono::steady_clock::now() < deadline) usleep(2000);
    failures += check(last_ran(), "work queued before cuStreamDestroy ran");
    return failures;
  }, std::chrono::seconds(100));
  CHECK_MESSAGE((r.exited && r.code == 0), "exit ", r.code);
}

TEST_CASE("driver: stream capture and graphs (captured work runs at capture, a launch runs nothing)") {
  const auto r = run_process([] {
    CUcontext ctx;
    int failures = check(cuInit(0) == CUDA_SUCCESS && cuDevicePrimaryCtxRetain(&ctx, 0) == CUDA_SUCCESS &&
                             cuCtxSetCurrent(ctx) == CUDA_SUCCESS, "context");
    CUstream s;
    failures += check(cuStreamCreate(&s, 0) == CUDA_SUCCESS, "stream");
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    failures += check(cuStreamIsCapturing(s, &status) == CUDA_SUCCESS && status == CU_STREAM_CAPTURE_STATUS_NONE, "not capturing");
    CUgraph graph = nullptr;
    failures += check(cuStreamEndCapture(s, &graph) == CUDA_ERROR_ILLEGAL_STATE, "end without begin");
    failures += check(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) == CUDA_SUCCESS, "begin");
    failures += check(cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_GLOBAL) == CUDA_ERROR_ILLEGAL_STATE, "begin twice");
    failures += check(cuStreamIsCapturing(s, &status) == CUDA_SUCCESS && status == CU_STREAM_CAPTURE_STATUS_ACTIVE, "capturing");
    failures += check(cuStreamIsCapturing(nullptr, &status) == CUDA_SUCCESS && status == CU_STREAM_CAPTURE_STATUS_NONE,
                      "the legacy stream is not");
    Log log;
    Entry first{&log, 1};
    failures += check(cuLaunchHostFunc(s, &Entry::append, &first) == CUDA_SUCCESS, "work during the capture");
    failures += check(cuStreamEndCapture(s, &graph) == CUDA_SUCCESS && graph != nullptr, "end");
    failures += check(cuStreamIsCapturing(s, &status) == CUDA_SUCCESS && status == CU_STREAM_CAPTURE_STATUS_NONE, "ended");
    CUgraphExec exec = nullptr;
    failures += check(cuGraphInstantiateWithFlags(&exec, graph, 0) == CUDA_SUCCESS && exec != nullptr, "instantiate");
    for (int i = 0; i < 3; ++i) failures += check(cuGraphLaunch(exec, s) == CUDA_SUCCESS, "launch");
    failures += check(cuStreamSynchronize(s) == CUDA_SUCCESS, "synchronize");
    failures += check(log.order == std::vector<int>{1}, "the captured work ran once, the launches ran nothing");
    failures += check(cuStreamBeginCapture_v2(nullptr, CU_STREAM_CAPTURE_MODE_GLOBAL) == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
                      "the legacy stream cannot capture");
    failures += check(cuGraphExecDestroy(exec) == CUDA_SUCCESS && cuGraphDestroy(graph) == CUDA_SUCCESS, "destroy");
    void* fn = nullptr;
    failures += check(cuGetProcAddress("cuStreamIsCapturing", &fn, 12000, CU_GET_PROC_ADDRESS_DEFAULT, nullptr) == CUDA_SUCCESS &&
                          fn == reinterpret_cast<void*>(&cuStreamIsCapturing), "cuGetProcAddress finds it");
    return failures;
  }, std::chrono::seconds(20));
  CHECK_MESSAGE((r.exited && r.code == 0), "exit ", r.code);
}

TEST_CASE("driver: cuGetProcAddress") {
  void* fn = nullptr;
  CUdriverProcAddressQueryResult status{};
  CHECK(cuGetProcAddress("cuEventDestroy", &fn, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &status) == CUDA_SUCCESS);
  CHECK(fn == reinterpret_cast<void*>(&cuEventDestroy_v2));
  CHECK(status == CU_GET_PROC_ADDRESS_SUCCESS);
  CHECK(cuGetProcAddress("cuEventRecord", &fn, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &status) == CUDA_SUCCESS);
  CHECK(fn != reinterpret_cast<void*>(&cuEventRecord));
  CHECK(cuGetProcAddress("cuNoSuchThing", &fn, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &status) == CUDA_ERROR_NOT_FOUND);
  CHECK(status == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  CHECK(fn == nullptr);
}
