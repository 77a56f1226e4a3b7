#include "shim/core/completion.h"

#include <dlfcn.h>

#include <atomic>

namespace hangshim::shim {

bool CudaCompletion::available(uint64_t now_ns) noexcept {
  if (__atomic_load_n(&loaded_, __ATOMIC_ACQUIRE)) return true;
  uint64_t last = __atomic_load_n(&last_attempt_ns_, __ATOMIC_RELAXED);
  if (last != 0 && now_ns - last < 1000000000ull) return false;  // checked at most once a second
  std::lock_guard<std::mutex> lock(load_mutex_);
  if (loaded_) return true;
  __atomic_store_n(&last_attempt_ns_, now_ns, __ATOMIC_RELAXED);
  bool ok = load();
  __atomic_store_n(&loaded_, ok, __ATOMIC_RELEASE);
  return ok;
}

bool CudaCompletion::load() noexcept {
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD | RTLD_LOCAL);
  if (driver == nullptr) return false;  // the process does not use CUDA (yet)
  auto find = [&](const char* name) { return dlsym(driver, name); };
  event_create_ = reinterpret_cast<EventCreate>(find("cuEventCreate"));
  event_record_ = reinterpret_cast<EventRecord>(find("cuEventRecord"));
  event_query_ = reinterpret_cast<EventQuery>(find("cuEventQuery"));
  event_destroy_ = reinterpret_cast<EventDestroy>(find("cuEventDestroy_v2"));
  if (event_destroy_ == nullptr) event_destroy_ = reinterpret_cast<EventDestroy>(find("cuEventDestroy"));
  ctx_get_current_ = reinterpret_cast<CtxGetCurrent>(find("cuCtxGetCurrent"));
  stream_is_capturing_ = reinterpret_cast<StreamIsCapturing>(find("cuStreamIsCapturing"));
  auto init = reinterpret_cast<Init>(find("cuInit"));
  // The handle stays open: the driver must outlive our events. cuInit is a no-op when the
  // process has initialized CUDA, which it has if it launched work on a stream.
  if (event_create_ == nullptr || event_record_ == nullptr || event_query_ == nullptr || event_destroy_ == nullptr ||
      init == nullptr || init(0) != CUDA_SUCCESS) {
    return false;
  }
  return true;
}

CUevent CudaCompletion::acquire(CUcontext context) noexcept {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = free_.size(); i-- > 0;) {
      if (free_[i].context == context) {
        CUevent event = free_[i].event;
        free_[i] = free_.back();
        free_.pop_back();
        return event;
      }
    }
  }
  CUevent event = nullptr;
  if (event_create_(&event, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) return nullptr;
  return event;
}

void CudaCompletion::release(CUevent event, CUcontext context) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    free_.push_back({event, context});
  } catch (...) {
    event_destroy_(event);
  }
}

CudaCompletion::Track CudaCompletion::record_shared(CUstream stream, CUevent* event, CUcontext* context) noexcept {
  *event = nullptr;
  *context = nullptr;
  if (stream_is_capturing_ != nullptr) {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    if (stream_is_capturing_(stream, &status) == CUDA_SUCCESS && status != CU_STREAM_CAPTURE_STATUS_NONE) {
      return Track::Captured;
    }
  }
  if (ctx_get_current_ != nullptr && ctx_get_current_(context) != CUDA_SUCCESS) *context = nullptr;
  CUevent e = acquire(*context);
  if (e == nullptr) return Track::Failed;
  if (event_record_(e, stream) != CUDA_SUCCESS) {
    // Typically an event of another context than the stream's: drop it rather than reuse it.
    event_destroy_(e);
    return Track::Failed;
  }
  *event = e;
  return Track::Tracked;
}

void CudaCompletion::add_pending(const PendingCompletion& pending) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    incoming_.push_back(pending);
  } catch (...) {
    // Out of memory: the record stays pending; its comm's counters still tell the story.
  }
}

CudaCompletion::Track CudaCompletion::track(PendingCompletion pending, CUstream stream) noexcept {
  Track t = record_shared(stream, &pending.event, &pending.context);
  if (t != Track::Tracked) return t;
  pending.owns_event = true;
  add_pending(pending);
  return t;
}

void CudaCompletion::take_new() noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  try {
    polling_.insert(polling_.end(), incoming_.begin(), incoming_.end());
    incoming_.clear();
  } catch (...) {
  }
}

}  // namespace hangshim::shim
