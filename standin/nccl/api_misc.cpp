// Error strings, the last error, host-memory allocation, and the mark that tells test programs
// they loaded the stand-in rather than a real NCCL.
#include "errors.h"
#include "export.h"

#include <cstdlib>

using namespace fakenccl;

NCCL_API(const char*, ncclGetErrorString, ncclResult_t code) { return error_string(code); }

NCCL_API(const char*, ncclGetLastError, ncclComm_t comm) {
  (void)comm;  // NCCL ignores it too: the last error is per process
  return last_error();
}

// Buffers of the stand-in are host memory, so the NCCL allocator is plain malloc.
NCCL_API(ncclResult_t, ncclMemAlloc, void** ptr, size_t size) {
  return guarded([&] {
    if (ptr == nullptr) return fail(ncclInvalidArgument, "fakenccl: ncclMemAlloc: ptr is NULL");
    *ptr = std::malloc(size == 0 ? 1 : size);
    if (*ptr == nullptr) return fail(ncclSystemError, "fakenccl: ncclMemAlloc: out of memory ({} bytes)", size);
    return ncclSuccess;
  });
}

NCCL_API(ncclResult_t, ncclMemFree, void* ptr) {
  std::free(ptr);
  return ncclSuccess;
}

// Not part of NCCL: present only in the stand-in, so test programs can refuse to run against a
// real libnccl.so.2 (whose collectives would need device memory).
FAKENCCL_EXPORT const char* hangshimFakeNcclDescription() {
  return "hangshim CPU stand-in for libnccl.so.2 (host buffers, shared-memory rendezvous)";
}
