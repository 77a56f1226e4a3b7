// Events: recording one notes how much work its stream (or, for the special streams, every
// blocking stream) has been given; it completes when that much has run.
#include "driver.h"
#include "guard.h"

using namespace fakecuda;

namespace {

constexpr unsigned kEventFlags = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;

CUresult record(CUevent hEvent, CUstream hStream, unsigned int flags) {
  return initialized_call([&](Driver&, std::unique_lock<std::mutex>&) {
    if ((flags & ~static_cast<unsigned>(CU_EVENT_RECORD_EXTERNAL)) != 0) return CUDA_ERROR_INVALID_VALUE;
    std::shared_ptr<EventState> e = find_event(hEvent);
    if (!e) return CUDA_ERROR_INVALID_HANDLE;
    std::shared_ptr<StreamState> s = find_stream(hStream);
    if (!s && !is_special_stream(hStream)) return CUDA_ERROR_INVALID_HANDLE;
    e->marks = std::make_shared<const Marks>(marks_now(s));
    e->recorded = true;
    return CUDA_SUCCESS;
  });
}

CUresult destroy(CUevent hEvent) {
  return initialized_call([&](Driver& d, std::unique_lock<std::mutex>&) {
    return d.events.erase(hEvent) == 1 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
  });
}

}  // namespace

FAKECUDA_EXPORT CUresult cuEventCreate(CUevent* phEvent, unsigned int Flags) {
  return initialized_call([&](Driver& d, std::unique_lock<std::mutex>&) {
    if (phEvent == nullptr || (Flags & ~kEventFlags) != 0) return CUDA_ERROR_INVALID_VALUE;
    if (current_context() == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    auto event = std::make_shared<EventState>();
    event->flags = Flags;
    d.events.emplace(event.get(), event);
    *phEvent = reinterpret_cast<CUevent>(event.get());
    return CUDA_SUCCESS;
  });
}

FAKECUDA_EXPORT CUresult cuEventRecord(CUevent hEvent, CUstream hStream) { return record(hEvent, hStream, 0); }
FAKECUDA_EXPORT CUresult cuEventRecord_ptsz(CUevent hEvent, CUstream hStream) { return record(hEvent, hStream, 0); }
FAKECUDA_EXPORT CUresult cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags) {
  return record(hEvent, hStream, flags);
}
FAKECUDA_EXPORT CUresult cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream, unsigned int flags) {
  return record(hEvent, hStream, flags);
}

FAKECUDA_EXPORT CUresult cuEventQuery(CUevent hEvent) {
  return initialized_call([&](Driver&, std::unique_lock<std::mutex>&) {
    std::shared_ptr<EventState> e = find_event(hEvent);
    if (!e) return CUDA_ERROR_INVALID_HANDLE;
    return !e->recorded || marks_done(*e->marks) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
  });
}

FAKECUDA_EXPORT CUresult cuEventSynchronize(CUevent hEvent) {
  return initialized_call([&](Driver& d, std::unique_lock<std::mutex>& lock) {
    std::shared_ptr<EventState> e = find_event(hEvent);
    if (!e) return CUDA_ERROR_INVALID_HANDLE;
    if (!e->recorded) return CUDA_SUCCESS;
    std::shared_ptr<const Marks> marks = e->marks;  // a concurrent re-record does not move the goal
    d.changed.wait(lock, [&] { return marks_done(*marks); });
    return CUDA_SUCCESS;
  });
}

FAKECUDA_EXPORT CUresult cuEventDestroy_v2(CUevent hEvent) { return destroy(hEvent); }
FAKECUDA_EXPORT CUresult cuEventDestroy(CUevent hEvent) { return destroy(hEvent); }
