// Benchmark probe, loaded by tests/bench/shim_bench_python.py with ctypes. Measures, without
// the stand-in's own (and noisier) cost around them:
//  - hangshim_bench_capture: the call-site capture alone (CallsiteCapture::capture), from the
//    calling Python thread at whatever depth the script called from;
//  - hangshim_bench_record: the recording of one call without capture (Recorder::begin + end,
//    the ledger writes, counters and clock reads every wrapped NCCL call adds).
// Both return nanoseconds of CPU time per call.
#include <time.h>

#include <memory>

#include "ledger/writer.h"
#include "shim/core/callsite_capture.h"
#include "shim/core/recorder.h"

using namespace hangshim;

namespace {
double cpu_ns() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e9 + static_cast<double>(now.tv_nsec);
}
}  // namespace

extern "C" __attribute__((visibility("default"))) double hangshim_bench_capture(long calls, const char* ledger_path) {
  static std::unique_ptr<ledger::Writer> writer;
  static std::unique_ptr<shim::CallsiteCapture> capture;
  if (!capture) {
    auto made = ledger::Writer::create(ledger_path, ledger::Geometry{}, ledger::Identity{});
    if (!made) return -1;
    writer = std::move(made.value());
    capture = std::make_unique<shim::CallsiteCapture>(*writer, shim::Config{});
  }
  if (capture->capture().id == 0) return -2;  // first sighting: resolve and intern
  // CPU time of this thread, not wall time: on a shared machine other processes' load would
  // otherwise be counted as ours.
  double start = cpu_ns();
  for (long i = 0; i < calls; ++i) capture->capture();
  return (cpu_ns() - start) / static_cast<double>(calls);
}

// The recorder comes from the environment like the shim's (set HANGSHIM_DIR, and
// HANGSHIM_CALLSITES=0 to leave capture out). The communicator is a made-up handle: the
// recorder registers it as one it did not see created.
extern "C" __attribute__((visibility("default"))) double hangshim_bench_record(long calls) {
  shim::Recorder* recorder = shim::Recorder::instance();
  if (recorder == nullptr) return -1;
  static int fake_comm;
  shim::CallInfo call;
  call.op = ledger::Op::AllReduce;
  call.comm = &fake_comm;
  call.count = 1;
  call.dtype = 7;
  call.red_op = 0;
  recorder->end(recorder->begin(call), 0);  // first sighting of the communicator
  double start = cpu_ns();
  for (long i = 0; i < calls; ++i) recorder->end(recorder->begin(call), 0);
  return (cpu_ns() - start) / static_cast<double>(calls);
}
