// Streams: creation needs a current context (as with the real driver); work runs in order on the
// stream's worker thread; the special streams (NULL, legacy, per-thread) are synchronous and
// order after every blocking stream, like the legacy default stream.
#include "driver.h"
#include "guard.h"

using namespace fakecuda;

namespace {

CUresult create_stream(CUstream* phStream, unsigned int flags) {
  return initialized_call([&](Driver& d, std::unique_lock<std::mutex>&) {
    if (phStream == nullptr || (flags & ~static_cast<unsigned>(CU_STREAM_NON_BLOCKING)) != 0) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    if (current_context() == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    std::shared_ptr<StreamState> stream = start_stream(current_context(), flags);
    d.streams.emplace(stream.get(), stream);
    *phStream = reinterpret_cast<CUstream>(stream.get());
    return CUDA_SUCCESS;
  });
}

// Waits until `marks` are done; the caller holds `lock`.
void wait_marks(std::unique_lock<std::mutex>& lock, const Marks& marks) {
  driver().changed.wait(lock, [&] { return marks_done(marks); });
}

CUresult synchronize(CUstream hStream) {
  return initialized_call([&](Driver&, std::unique_lock<std::mutex>& lock) {
    std::shared_ptr<StreamState> s = find_stream(hStream);
    if (!s && !is_special_stream(hStream)) return CUDA_ERROR_INVALID_HANDLE;
    wait_marks(lock, marks_now(s));
    return CUDA_SUCCESS;
  });
}

CUresult query(CUstream hStream) {
  return initialized_call([&](Driver&, std::unique_lock<std::mutex>&) {
    std::shared_ptr<StreamState> s = find_stream(hStream);
    if (!s && !is_special_stream(hStream)) return CUDA_ERROR_INVALID_HANDLE;
    return marks_done(marks_now(s)) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
  });
}

CUresult launch_host_func(CUstream hStream, CUhostFn fn, void* userData) {
  return initialized_call([&](Driver&, std::unique_lock<std::mutex>& lock) {
    if (fn == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::shared_ptr<StreamState> s = find_stream(hStream);
    if (!s) {
      if (!is_special_stream(hStream)) return CUDA_ERROR_INVALID_HANDLE;
      wait_marks(lock, marks_now(nullptr));  // the legacy stream runs after the blocking streams
      lock.unlock();
      fn(userData);
      return CUDA_SUCCESS;
    }
    Item item;
    item.fn = fn;
    item.data = userData;
    enqueue(*s, std::move(item));
    return CUDA_SUCCESS;
  });
}

CUresult wait_event(CUstream hStream, CUevent hEvent, unsigned int Flags) {
  return initialized_call([&](Driver&, std::unique_lock<std::mutex>& lock) {
    if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
    std::shared_ptr<EventState> e = find_event(hEvent);
    if (!e) return CUDA_ERROR_INVALID_HANDLE;
    std::shared_ptr<StreamState> s = find_stream(hStream);
    if (!e->recorded) return CUDA_SUCCESS;  // waiting for a never-recorded event is a no-op
    if (!s) {
      if (!is_special_stream(hStream)) return CUDA_ERROR_INVALID_HANDLE;
      wait_marks(lock, *e->marks);
      return CUDA_SUCCESS;
    }
    Item item;
    item.wait_for = e->marks;
    enqueue(*s, std::move(item));
    return CUDA_SUCCESS;
  });
}

CUresult destroy_stream(CUstream hStream) {
  return initialized_call([&](Driver& d, std::unique_lock<std::mutex>&) {
    std::shared_ptr<StreamState> s = find_stream(hStream);
    if (!s) return CUDA_ERROR_INVALID_HANDLE;
    // Returns at once; the worker finishes the queued work, then exits (as the driver documents).
    d.streams.erase(hStream);
    s->destroyed = true;
    d.changed.notify_all();
    return CUDA_SUCCESS;
  });
}

}  // namespace

FAKECUDA_EXPORT CUresult cuStreamCreate(CUstream* phStream, unsigned int Flags) {
  return create_stream(phStream, Flags);
}
FAKECUDA_EXPORT CUresult cuStreamCreateWithPriority(CUstream* phStream, unsigned int flags, int priority) {
  (void)priority;  // one worker per stream: priorities have nothing to order
  return create_stream(phStream, flags);
}
FAKECUDA_EXPORT CUresult cuStreamDestroy_v2(CUstream hStream) { return destroy_stream(hStream); }
FAKECUDA_EXPORT CUresult cuStreamDestroy(CUstream hStream) { return destroy_stream(hStream); }
FAKECUDA_EXPORT CUresult cuStreamSynchronize(CUstream hStream) { return synchronize(hStream); }
FAKECUDA_EXPORT CUresult cuStreamSynchronize_ptsz(CUstream hStream) { return synchronize(hStream); }
FAKECUDA_EXPORT CUresult cuStreamQuery(CUstream hStream) { return query(hStream); }
FAKECUDA_EXPORT CUresult cuStreamQuery_ptsz(CUstream hStream) { return query(hStream); }
FAKECUDA_EXPORT CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void* userData) {
  return launch_host_func(hStream, fn, userData);
}
FAKECUDA_EXPORT CUresult cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void* userData) {
  return launch_host_func(hStream, fn, userData);
}
FAKECUDA_EXPORT CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags) {
  return wait_event(hStream, hEvent, Flags);
}
FAKECUDA_EXPORT CUresult cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags) {
  return wait_event(hStream, hEvent, Flags);
}
