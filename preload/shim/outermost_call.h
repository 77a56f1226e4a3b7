// Which NCCL calls are the program's own. NCCL calls some of its exported functions through
// its PLT (the real 2.28: ncclBcast -> ncclBroadcast, and ncclGetUniqueId, ncclGetVersion,
// ncclCommGetAsyncError, ncclCommRegister, ... from inside other entry points), so with the
// shim preloaded those inner calls land in our wrappers too. Recording them would count one
// program call twice and make sequence numbers and call-site iterations drift from the other
// ranks'. A wrapper entered while the same thread is already inside one forwards without a
// record: one thread-local counter, no syscall, no allocation.
#pragma once

#include <cstdint>

namespace hangshim::shim {

// Initial-exec TLS: no __tls_get_addr on the hot path (the shim is preloaded).
__attribute__((tls_model("initial-exec"))) inline thread_local uint32_t t_nccl_call_depth = 0;

class OutermostCall {
 public:
  OutermostCall() noexcept : outermost_(t_nccl_call_depth++ == 0) {}
  ~OutermostCall() { --t_nccl_call_depth; }
  OutermostCall(const OutermostCall&) = delete;
  OutermostCall& operator=(const OutermostCall&) = delete;

  // True for the program's own call; false for NCCL calling its own API from inside one.
  bool outermost() const noexcept { return outermost_; }

 private:
  bool outermost_;
};

}  // namespace hangshim::shim
