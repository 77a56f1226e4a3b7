// State of the CPU stand-in for the CUDA driver (libcuda.so.1): contexts, streams that run
// host work in order on a worker thread each, and events that complete when the work enqueued
// before them has run. Enough of the driver for the shim's completion tracking (cuEvent*,
// cuStreamSynchronize) and for the stand-in NCCL's asynchronous mode (cuLaunchHostFunc).
//
// Compiled with __CUDA_API_VERSION_INTERNAL, as the driver itself is: cuda.h then declares every
// exported name (cuEventDestroy and cuEventDestroy_v2, cuEventRecord_ptsz ...) unrenamed, so the
// compiler checks each definition against NVIDIA's prototype.
#pragma once

#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#define FAKECUDA_EXPORT extern "C" __attribute__((visibility("default")))

namespace fakecuda {

inline constexpr int kDeviceCount = 64;  // as many as the stand-in NCCL's largest communicator

struct Context {
  int device = 0;
  int retained = 0;  // cuDevicePrimaryCtxRetain count
};

struct StreamState;
// "Stream s has run its first n items": what an event waits for.
using Marks = std::vector<std::pair<std::shared_ptr<StreamState>, std::uint64_t>>;

struct Item {
  CUhostFn fn = nullptr;
  void* data = nullptr;
  std::shared_ptr<const Marks> wait_for;  // cuStreamWaitEvent
};

struct StreamState {
  Context* context = nullptr;
  unsigned flags = 0;
  std::deque<Item> queue;
  std::uint64_t enqueued = 0;
  std::uint64_t completed = 0;
  bool destroyed = false;
  // Between cuStreamBeginCapture and cuStreamEndCapture (api_graph.cpp). The stand-in runs work
  // enqueued meanwhile at once, as outside a capture, and a graph launch runs nothing: what a
  // caller of NCCL sees (one call at capture, none per replay) is the same as on a GPU.
  bool capturing = false;
};

struct EventState {
  unsigned flags = 0;
  bool recorded = false;
  std::shared_ptr<const Marks> marks;
};

// One lock and one condition variable for all streams and events of the process: simple, and
// the stand-in's traffic is tiny.
struct Driver {
  std::mutex mutex;
  std::condition_variable changed;
  bool initialized = false;
  Context contexts[kDeviceCount];
  std::unordered_map<const void*, std::shared_ptr<StreamState>> streams;
  std::unordered_map<const void*, std::shared_ptr<EventState>> events;
};

Driver& driver();  // never destroyed: workers may run during static teardown
Context*& current_context();  // per thread, like the real driver's

bool is_special_stream(CUstream stream);  // NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD
// Resolves a stream handle under the driver lock; nullptr for special or unknown handles.
std::shared_ptr<StreamState> find_stream(CUstream stream);
std::shared_ptr<EventState> find_event(CUevent event);

// Marks for "everything enqueued so far" on `stream`; for the special streams: on every
// blocking stream (the legacy default stream synchronizes with them). Caller holds the lock.
Marks marks_now(const std::shared_ptr<StreamState>& stream);
bool marks_done(const Marks& marks);  // caller holds the lock

std::shared_ptr<StreamState> start_stream(Context* context, unsigned flags);
void enqueue(StreamState& stream, Item item);  // caller holds the lock

}  // namespace fakecuda
