#include "cuda_bridge.h"

#include "errors.h"

#include <cuda.h>
#include <dlfcn.h>

#include <cstdint>
#include <string>

namespace fakenccl {
namespace {

using LaunchHostFunc = CUresult (*)(CUstream, CUhostFn, void*);
using CtxGetCurrent = CUresult (*)(CUcontext*);
using CtxGetDevice = CUresult (*)(CUdevice*);
using GetErrorString = CUresult (*)(CUresult, const char**);

struct Driver {
  void* handle = nullptr;
  LaunchHostFunc launch_host_func = nullptr;
  GetErrorString get_error_string = nullptr;
  std::string error;
};

const Driver& driver() {
  static const Driver d = [] {
    Driver out;
    out.handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (out.handle == nullptr) {
      const char* why = dlerror();
      out.error = why != nullptr ? why : "dlopen failed";
      return out;
    }
    out.launch_host_func = reinterpret_cast<LaunchHostFunc>(dlsym(out.handle, "cuLaunchHostFunc"));
    out.get_error_string = reinterpret_cast<GetErrorString>(dlsym(out.handle, "cuGetErrorString"));
    if (out.launch_host_func == nullptr) out.error = "libcuda.so.1 has no cuLaunchHostFunc";
    return out;
  }();
  return d;
}

}  // namespace

bool is_synchronous_stream(cudaStream_t stream) {
  const auto value = reinterpret_cast<std::uintptr_t>(stream);
  return value == 0 || value == 1 || value == 2;
}

ncclResult_t check_stream_support() {
  const Driver& d = driver();
  if (d.launch_host_func != nullptr) return ncclSuccess;
  return fail(ncclUnhandledCudaError,
              "fakenccl: a stream was given but the CUDA driver is unavailable: {} (put the "
              "stand-in libcuda.so.1 on LD_LIBRARY_PATH, or pass a NULL stream)", d.error);
}

ncclResult_t launch_on_stream(cudaStream_t stream, void (*fn)(void*), void* data) {
  if (ncclResult_t r = check_stream_support(); r != ncclSuccess) return r;
  const Driver& d = driver();
  const CUresult r = d.launch_host_func(reinterpret_cast<CUstream>(stream), fn, data);
  if (r != CUDA_SUCCESS) {
    const char* text = nullptr;
    if (d.get_error_string != nullptr) d.get_error_string(r, &text);
    return fail(ncclUnhandledCudaError, "fakenccl: cuLaunchHostFunc on stream {} failed: {} ({})",
                static_cast<const void*>(stream), text != nullptr ? text : "unknown error", static_cast<int>(r));
  }
  return ncclSuccess;
}

int current_cuda_device() {
  // RTLD_NOLOAD: only a driver the program already uses says anything about its device.
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (handle == nullptr) return 0;
  auto get_current = reinterpret_cast<CtxGetCurrent>(dlsym(handle, "cuCtxGetCurrent"));
  auto get_device = reinterpret_cast<CtxGetDevice>(dlsym(handle, "cuCtxGetDevice"));
  int device = 0;
  CUcontext ctx = nullptr;
  if (get_current != nullptr && get_device != nullptr && get_current(&ctx) == CUDA_SUCCESS && ctx != nullptr) {
    CUdevice dev = 0;
    if (get_device(&dev) == CUDA_SUCCESS) device = dev;
  }
  dlclose(handle);
  return device;
}

}  // namespace fakenccl
