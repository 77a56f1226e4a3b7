// libhangshim.so's glue: what runs at load (only noting the main thread: most processes that
// inherit LD_PRELOAD never call NCCL, and must not pay for the shim) and the recorder access.
#include <pthread.h>

#include "shim/core/callsite_capture.h"
#include "shim/wrappers.h"

namespace hangshim::shim {

namespace {

__attribute__((constructor)) void on_load() {
  // LD_PRELOAD libraries are initialized on the main thread: the thread whose Python frames
  // a thread without any (DDP's reducer, autograd workers) borrows.
  CallsiteCapture::set_main_thread(static_cast<uint64_t>(pthread_self()));
}

int query_user_rank(void* comm, int* rank) {
  auto fn = HANGSHIM_REAL(ncclCommUserRank);
  return fn != nullptr ? fn(static_cast<ncclComm_t>(comm), rank) : ncclInvalidUsage;
}
int query_count(void* comm, int* count) {
  auto fn = HANGSHIM_REAL(ncclCommCount);
  return fn != nullptr ? fn(static_cast<ncclComm_t>(comm), count) : ncclInvalidUsage;
}
int query_device(void* comm, int* device) {
  auto fn = HANGSHIM_REAL(ncclCommCuDevice);
  return fn != nullptr ? fn(static_cast<ncclComm_t>(comm), device) : ncclInvalidUsage;
}
int query_version(int* version) {
  auto fn = HANGSHIM_REAL(ncclGetVersion);
  return fn != nullptr ? fn(version) : ncclInvalidUsage;
}

}  // namespace

Recorder* recorder() noexcept {
  static const bool registered = [] {
    Recorder::set_queries(NcclQueries{query_user_rank, query_count, query_device, query_version});
    return true;
  }();
  (void)registered;
  return Recorder::instance();
}

Recorder* existing_recorder() noexcept { return Recorder::existing(); }

}  // namespace hangshim::shim
