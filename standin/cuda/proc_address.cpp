// cuGetProcAddress: the driver entry points by base name, as the CUDA runtime and PyTorch look
// them up. Versioned names resolve to their newest variant; CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
// picks the _ptsz variant where one exists.
#include "driver.h"
#include "guard.h"

#include <cstring>

using namespace fakecuda;

namespace {

struct Entry {
  const char* name;
  void* fn;
  void* per_thread;  // nullptr when the symbol has no per-thread-stream variant
};

template <typename F>
void* address(F* f) {
  return reinterpret_cast<void*>(f);
}

const Entry kEntries[] = {
    {"cuInit", address(cuInit), nullptr},
    {"cuDriverGetVersion", address(cuDriverGetVersion), nullptr},
    {"cuGetErrorString", address(cuGetErrorString), nullptr},
    {"cuGetErrorName", address(cuGetErrorName), nullptr},
    {"cuGetProcAddress", address(cuGetProcAddress_v2), nullptr},
    {"cuDeviceGet", address(cuDeviceGet), nullptr},
    {"cuDeviceGetCount", address(cuDeviceGetCount), nullptr},
    {"cuDeviceGetName", address(cuDeviceGetName), nullptr},
    {"cuDevicePrimaryCtxRetain", address(cuDevicePrimaryCtxRetain), nullptr},
    {"cuDevicePrimaryCtxRelease", address(cuDevicePrimaryCtxRelease_v2), nullptr},
    {"cuCtxGetCurrent", address(cuCtxGetCurrent), nullptr},
    {"cuCtxSetCurrent", address(cuCtxSetCurrent), nullptr},
    {"cuCtxGetDevice", address(cuCtxGetDevice), nullptr},
    {"cuCtxSynchronize", address(cuCtxSynchronize), nullptr},
    {"cuStreamCreate", address(cuStreamCreate), nullptr},
    {"cuStreamCreateWithPriority", address(cuStreamCreateWithPriority), nullptr},
    {"cuStreamDestroy", address(cuStreamDestroy_v2), nullptr},
    {"cuStreamSynchronize", address(cuStreamSynchronize), address(cuStreamSynchronize_ptsz)},
    {"cuStreamQuery", address(cuStreamQuery), address(cuStreamQuery_ptsz)},
    {"cuStreamWaitEvent", address(cuStreamWaitEvent), address(cuStreamWaitEvent_ptsz)},
    {"cuLaunchHostFunc", address(cuLaunchHostFunc), address(cuLaunchHostFunc_ptsz)},
    {"cuEventCreate", address(cuEventCreate), nullptr},
    {"cuEventRecord", address(cuEventRecord), address(cuEventRecord_ptsz)},
    {"cuEventRecordWithFlags", address(cuEventRecordWithFlags), address(cuEventRecordWithFlags_ptsz)},
    {"cuEventQuery", address(cuEventQuery), nullptr},
    {"cuEventSynchronize", address(cuEventSynchronize), nullptr},
    {"cuEventDestroy", address(cuEventDestroy_v2), nullptr},
    {"cuStreamBeginCapture", address(cuStreamBeginCapture_v2), address(cuStreamBeginCapture_v2_ptsz)},
    {"cuStreamEndCapture", address(cuStreamEndCapture), address(cuStreamEndCapture_ptsz)},
    {"cuStreamIsCapturing", address(cuStreamIsCapturing), address(cuStreamIsCapturing_ptsz)},
    {"cuGraphInstantiate", address(cuGraphInstantiateWithFlags), nullptr},
    {"cuGraphInstantiateWithFlags", address(cuGraphInstantiateWithFlags), nullptr},
    {"cuGraphLaunch", address(cuGraphLaunch), address(cuGraphLaunch_ptsz)},
    {"cuGraphExecDestroy", address(cuGraphExecDestroy), nullptr},
    {"cuGraphDestroy", address(cuGraphDestroy), nullptr},
};

CUresult lookup(const char* symbol, void** pfn, cuuint64_t flags, CUdriverProcAddressQueryResult* status) {
  if (symbol == nullptr || pfn == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *pfn = nullptr;
  for (const Entry& e : kEntries) {
    if (std::strcmp(e.name, symbol) != 0) continue;
    const bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    *pfn = per_thread && e.per_thread != nullptr ? e.per_thread : e.fn;
    if (status != nullptr) *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
  }
  if (status != nullptr) *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  return CUDA_ERROR_NOT_FOUND;
}

}  // namespace

FAKECUDA_EXPORT CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                                             CUdriverProcAddressQueryResult* symbolStatus) {
  (void)cudaVersion;  // one version of everything
  return lookup(symbol, pfn, flags, symbolStatus);
}

FAKECUDA_EXPORT CUresult cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags) {
  (void)cudaVersion;
  return lookup(symbol, pfn, flags, nullptr);
}
