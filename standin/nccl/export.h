// Exporting the NCCL API the way libnccl.so.2 does: ncclX is a weak definition and pncclX an
// alias of it (the profiling interface), both with default visibility while everything else in
// the library is hidden. Bodies run behind a guard: no exception ever crosses the C ABI.
#pragma once

#include "errors.h"

#include <nccl.h>

#include <new>

#define FAKENCCL_EXPORT extern "C" __attribute__((visibility("default")))

#define NCCL_API(ret, func, ...)                                                 \
  FAKENCCL_EXPORT ret p##func(__VA_ARGS__) __attribute__((alias(#func)));       \
  FAKENCCL_EXPORT __attribute__((weak)) ret func(__VA_ARGS__)

namespace fakenccl {

template <typename Body>
ncclResult_t guarded(Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    set_last_error("fakenccl: out of memory");
    return ncclSystemError;
  } catch (...) {
    set_last_error("fakenccl: internal error (unexpected exception)");
    return ncclInternalError;
  }
}

}  // namespace fakenccl
