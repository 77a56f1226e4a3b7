// For the call-site test: runs ncclAllReduce calls on a fresh native thread, one with no Python
// frames at all (like DDP's reducer or an autograd worker), while the calling Python thread
// waits inside this function (the ctypes call released the GIL). The shim must attribute the
// calls to the main thread's Python call-site.
#include <nccl.h>

#include <thread>

extern "C" __attribute__((visibility("default"))) int hangshim_test_native_allreduce(void* comm, int calls) {
  int failures = 0;
  std::thread worker([&] {
    float value = 1.0f;
    for (int i = 0; i < calls; ++i) {
      if (ncclAllReduce(&value, &value, 1, ncclFloat, ncclSum, static_cast<ncclComm_t>(comm), nullptr) != ncclSuccess) {
        ++failures;
      }
    }
  });
  worker.join();
  return failures;
}
