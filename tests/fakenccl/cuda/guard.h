// No exception crosses the driver's C ABI: bodies run behind this guard.
#pragma once

#include "driver.h"

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

}  // namespace fakecuda
