// No exception crosses the driver's C ABI: bodies run behind this guard.
#pragma once

#include "driver.h"

#include <mutex>
#include <new>

namespace fakecuda {

template <typename Body>
CUresult guarded(Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  } catch (...) {
    return CUDA_ERROR_UNKNOWN;
  }
}

// CUDA_ERROR_NOT_INITIALIZED until cuInit ran, as with the real driver. Caller holds the lock.
inline CUresult require_init() { return driver().initialized ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED; }

// Most driver calls: guarded, under the driver's lock, and CUDA_ERROR_NOT_INITIALIZED before
// cuInit. body(driver, lock) may wait on driver.changed with the lock, or release it.
template <typename Body>
CUresult initialized_call(Body&& body) noexcept {
  return guarded([&] {
    Driver& d = driver();
    std::unique_lock lock(d.mutex);
    if (CUresult r = require_init(); r != CUDA_SUCCESS) return r;
    return body(d, lock);
  });
}

}  // namespace fakecuda
