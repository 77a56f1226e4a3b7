// Stream capture and CUDA graphs, as much of them as a job that captures a collective into a
// graph and replays it needs (the GPU check's CUDA-graph job, rehearsed on the CPU):
// cuStreamBeginCapture / cuStreamEndCapture / cuStreamIsCapturing on a stream of ours, a graph
// and its executable as opaque handles, and cuGraphLaunch, which runs nothing (driver.h: work
// captured ran once, at capture). The capture mode is accepted and not enforced.
#include <atomic>

#include "driver.h"
#include "guard.h"

using namespace fakecuda;

namespace {

// Graphs and their executables hold nothing: distinct non-null handles, never dereferenced.
std::atomic<std::uintptr_t> g_next_handle{0x6a000};

template <class Handle>
Handle new_handle() {
  return reinterpret_cast<Handle>(g_next_handle.fetch_add(0x10, std::memory_order_relaxed));
}

CUresult begin_capture(CUstream hStream, CUstreamCaptureMode mode) {
  return initialized_call([&](Driver&, std::unique_lock<std::mutex>&) {
    if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
        mode != CU_STREAM_CAPTURE_MODE_RELAXED) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    std::shared_ptr<StreamState> s = find_stream(hStream);
    if (!s) return is_special_stream(hStream) ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_ERROR_INVALID_HANDLE;
    if (s->capturing) return CUDA_ERROR_ILLEGAL_STATE;
    s->capturing = true;
    return CUDA_SUCCESS;
  });
}

CUresult end_capture(CUstream hStream, CUgraph* phGraph) {
  return initialized_call([&](Driver&, std::unique_lock<std::mutex>&) {
    if (phGraph == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::shared_ptr<StreamState> s = find_stream(hStream);
    if (!s) return CUDA_ERROR_INVALID_HANDLE;
    if (!s->capturing) return CUDA_ERROR_ILLEGAL_STATE;
    s->capturing = false;
    *phGraph = new_handle<CUgraph>();
    return CUDA_SUCCESS;
  });
}

CUresult is_capturing(CUstream hStream, CUstreamCaptureStatus* status) {
  return initialized_call([&](Driver&, std::unique_lock<std::mutex>&) {
    if (status == nullptr) return CUDA_ERROR_INVALID_VALUE;
    std::shared_ptr<StreamState> s = find_stream(hStream);
    if (!s && !is_special_stream(hStream)) return CUDA_ERROR_INVALID_HANDLE;
    *status = s && s->capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
  });
}

CUresult launch_graph(CUgraphExec hGraphExec, CUstream hStream) {
  return initialized_call([&](Driver&, std::unique_lock<std::mutex>&) {
    if (hGraphExec == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (!find_stream(hStream) && !is_special_stream(hStream)) return CUDA_ERROR_INVALID_HANDLE;
    return CUDA_SUCCESS;
  });
}

}  // namespace

FAKECUDA_EXPORT CUresult cuStreamBeginCapture(CUstream hStream) {
  return begin_capture(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL);
}
FAKECUDA_EXPORT CUresult cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode) {
  return begin_capture(hStream, mode);
}
FAKECUDA_EXPORT CUresult cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode) {
  return begin_capture(hStream, mode);
}
FAKECUDA_EXPORT CUresult cuStreamBeginCapture_ptsz(CUstream hStream) {
  return begin_capture(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL);
}
FAKECUDA_EXPORT CUresult cuStreamEndCapture(CUstream hStream, CUgraph* phGraph) { return end_capture(hStream, phGraph); }
FAKECUDA_EXPORT CUresult cuStreamEndCapture_ptsz(CUstream hStream, CUgraph* phGraph) {
  return end_capture(hStream, phGraph);
}
FAKECUDA_EXPORT CUresult cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus* captureStatus) {
  return is_capturing(hStream, captureStatus);
}
FAKECUDA_EXPORT CUresult cuStreamIsCapturing_ptsz(CUstream hStream, CUstreamCaptureStatus* captureStatus) {
  return is_capturing(hStream, captureStatus);
}
FAKECUDA_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec* phGraphExec, CUgraph hGraph, unsigned long long) {
  if (phGraphExec == nullptr || hGraph == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *phGraphExec = new_handle<CUgraphExec>();
  return CUDA_SUCCESS;
}
FAKECUDA_EXPORT CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream) { return launch_graph(hGraphExec, hStream); }
FAKECUDA_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream) {
  return launch_graph(hGraphExec, hStream);
}
FAKECUDA_EXPORT CUresult cuGraphExecDestroy(CUgraphExec hGraphExec) {
  return hGraphExec == nullptr ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
FAKECUDA_EXPORT CUresult cuGraphDestroy(CUgraph hGraph) { return hGraph == nullptr ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS; }
