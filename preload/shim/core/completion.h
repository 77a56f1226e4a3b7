// Completion of collectives. With CUDA (the process has loaded libcuda.so.1, the real driver or
// the CPU stand-in), an event is recorded on the collective's stream after the call returns
// and the watchdog polls it; the driver is found with dlopen(RTLD_NOLOAD) — the shim never
// loads or initializes CUDA in a process that did not. Without CUDA, completion = return.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <mutex>
#include <vector>

namespace hangshim::shim {

// A record waiting for its event.
struct PendingCompletion {
  uint64_t index = 0;    // ring record
  uint64_t seq = 0;      // its per-comm sequence number
  uint32_t comm = 0;     // comm id
  bool p2p = false;
  CUevent event = nullptr;
  CUcontext context = nullptr;
  bool owns_event = false;  // the last record sharing this event returns it to the pool
};

class CudaCompletion {
 public:
  // Finds the driver if the process has loaded it. Cheap to call again; retries at most once
  // a second while the driver is absent (it may be loaded later, at the first CUDA use).
  bool available(uint64_t now_ns) noexcept;

  enum class Track : uint8_t { Tracked, Captured, Failed };
  // Records an event on `stream` for `pending` (hot path: driver calls and a short lock).
  // Captured: the stream is being captured into a CUDA graph (the work runs later).
  Track track(PendingCompletion pending, CUstream stream) noexcept;
  // For a group: one event per stream, shared by several records. Returns the event (or null),
  // to be passed to add_shared.
  Track record_shared(CUstream stream, CUevent* event, CUcontext* context) noexcept;
  void add_pending(const PendingCompletion& pending) noexcept;

  // Watchdog: calls done(pending) for every record whose event has completed.
  template <class Done>
  void poll(Done&& done) {
    take_new();
    size_t kept = 0;
    CUevent last_event = nullptr;
    CUresult last_result = CUDA_SUCCESS;
    for (auto& p : polling_) {
      CUresult r = p.event == last_event ? last_result : event_query_(p.event);
      last_event = p.event;
      last_result = r;
      if (r == CUDA_ERROR_NOT_READY) {
        polling_[kept++] = p;
        continue;
      }
      // Success, or an error (the context is gone, the stream faulted): either way nothing
      // more will happen to this record.
      done(p, r == CUDA_SUCCESS);
      if (p.owns_event) release(p.event, p.context);
    }
    polling_.resize(kept);
  }

 private:
  bool load() noexcept;
  CUevent acquire(CUcontext context) noexcept;
  void release(CUevent event, CUcontext context) noexcept;
  void take_new() noexcept;

  using EventCreate = CUresult (*)(CUevent*, unsigned);
  using EventRecord = CUresult (*)(CUevent, CUstream);
  using EventQuery = CUresult (*)(CUevent);
  using EventDestroy = CUresult (*)(CUevent);
  using CtxGetCurrent = CUresult (*)(CUcontext*);
  using StreamIsCapturing = CUresult (*)(CUstream, CUstreamCaptureStatus*);
  using Init = CUresult (*)(unsigned);

  bool loaded_ = false;
  uint64_t last_attempt_ns_ = 0;
  std::mutex load_mutex_;
  EventCreate event_create_ = nullptr;
  EventRecord event_record_ = nullptr;
  EventQuery event_query_ = nullptr;
  EventDestroy event_destroy_ = nullptr;
  CtxGetCurrent ctx_get_current_ = nullptr;
  StreamIsCapturing stream_is_capturing_ = nullptr;

  std::mutex mutex_;                    // guards free_ and incoming_ (held for a few stores)
  struct FreeEvent {
    CUevent event;
    CUcontext context;
  };
  std::vector<FreeEvent> free_;
  std::vector<PendingCompletion> incoming_;  // filled by callers
  std::vector<PendingCompletion> polling_;   // the watchdog's own list
};

}  // namespace hangshim::shim
