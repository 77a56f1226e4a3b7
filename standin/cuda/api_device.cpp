// Initialization, versions, error strings, devices and (primary) contexts.
#include "driver.h"
#include "guard.h"

#include <cstdio>
#include <cstring>

using namespace fakecuda;

namespace {

struct ErrorText {
  CUresult code;
  const char* name;
  const char* text;  // the real driver's wording
};

constexpr ErrorText kErrors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

const ErrorText* find_error(CUresult code) {
  for (const ErrorText& e : kErrors) {
    if (e.code == code) return &e;
  }
  return nullptr;
}

Context* context_of(CUcontext ctx) {
  auto* c = reinterpret_cast<Context*>(ctx);
  Context* first = driver().contexts;
  return c >= first && c < first + kDeviceCount ? c : nullptr;
}

CUcontext handle_of(Context* c) { return reinterpret_cast<CUcontext>(c); }

}  // namespace

FAKECUDA_EXPORT CUresult cuGetErrorString(CUresult error, const char** pStr) {
  if (pStr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const ErrorText* e = find_error(error);
  *pStr = e != nullptr ? e->text : nullptr;
  return e != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKECUDA_EXPORT CUresult cuGetErrorName(CUresult error, const char** pStr) {
  if (pStr == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const ErrorText* e = find_error(error);
  *pStr = e != nullptr ? e->name : nullptr;
  return e != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKECUDA_EXPORT CUresult cuInit(unsigned int Flags) {
  if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard lock(driver().mutex);
  if (!driver().initialized) {
    for (int i = 0; i < kDeviceCount; ++i) driver().contexts[i].device = i;
    driver().initialized = true;
  }
  return CUDA_SUCCESS;
}

FAKECUDA_EXPORT CUresult cuDriverGetVersion(int* driverVersion) {
  if (driverVersion == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *driverVersion = CUDA_VERSION;
  return CUDA_SUCCESS;
}

FAKECUDA_EXPORT CUresult cuDeviceGetCount(int* count) {
  std::lock_guard lock(driver().mutex);
  if (CUresult r = require_init(); r != CUDA_SUCCESS) return r;
  if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *count = kDeviceCount;
  return CUDA_SUCCESS;
}

FAKECUDA_EXPORT CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  std::lock_guard lock(driver().mutex);
  if (CUresult r = require_init(); r != CUDA_SUCCESS) return r;
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (ordinal < 0 || ordinal >= kDeviceCount) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

FAKECUDA_EXPORT CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
  std::lock_guard lock(driver().mutex);
  if (CUresult r = require_init(); r != CUDA_SUCCESS) return r;
  if (name == nullptr || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  if (dev < 0 || dev >= kDeviceCount) return CUDA_ERROR_INVALID_DEVICE;
  std::snprintf(name, static_cast<std::size_t>(len), "hangshim CPU stand-in %d", dev);
  return CUDA_SUCCESS;
}

FAKECUDA_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
  std::lock_guard lock(driver().mutex);
  if (CUresult r = require_init(); r != CUDA_SUCCESS) return r;
  if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (dev < 0 || dev >= kDeviceCount) return CUDA_ERROR_INVALID_DEVICE;
  Context& c = driver().contexts[dev];
  ++c.retained;
  *pctx = handle_of(&c);
  return CUDA_SUCCESS;
}

FAKECUDA_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  std::lock_guard lock(driver().mutex);
  if (CUresult r = require_init(); r != CUDA_SUCCESS) return r;
  if (dev < 0 || dev >= kDeviceCount) return CUDA_ERROR_INVALID_DEVICE;
  Context& c = driver().contexts[dev];
  if (c.retained == 0) return CUDA_ERROR_INVALID_CONTEXT;
  --c.retained;
  return CUDA_SUCCESS;
}

FAKECUDA_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev) { return cuDevicePrimaryCtxRelease_v2(dev); }

FAKECUDA_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx) {
  std::lock_guard lock(driver().mutex);
  if (CUresult r = require_init(); r != CUDA_SUCCESS) return r;
  if (ctx == nullptr) {
    current_context() = nullptr;
    return CUDA_SUCCESS;
  }
  Context* c = context_of(ctx);
  if (c == nullptr || c->retained == 0) return CUDA_ERROR_INVALID_CONTEXT;
  current_context() = c;
  return CUDA_SUCCESS;
}

FAKECUDA_EXPORT CUresult cuCtxGetCurrent(CUcontext* pctx) {
  std::lock_guard lock(driver().mutex);
  if (CUresult r = require_init(); r != CUDA_SUCCESS) return r;
  if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *pctx = handle_of(current_context());
  return CUDA_SUCCESS;
}

FAKECUDA_EXPORT CUresult cuCtxGetDevice(CUdevice* device) {
  std::lock_guard lock(driver().mutex);
  if (CUresult r = require_init(); r != CUDA_SUCCESS) return r;
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (current_context() == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  *device = current_context()->device;
  return CUDA_SUCCESS;
}

FAKECUDA_EXPORT CUresult cuCtxSynchronize() {
  return initialized_call([](Driver& d, std::unique_lock<std::mutex>& lock) {
    Context* ctx = current_context();
    if (ctx == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
    Marks marks;
    for (const auto& [handle, s] : d.streams) {
      if (s->context == ctx) marks.emplace_back(s, s->enqueued);
    }
    d.changed.wait(lock, [&] { return marks_done(marks); });
    return CUDA_SUCCESS;
  });
}
