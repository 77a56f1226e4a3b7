// The failure path of a wrapped call: NCCL's own words about the error (ncclGetLastError) go
// into the ledger beside the numeric result, because "error 1" alone does not say whether the
// GPU is missing, the driver is too old or the network is unreachable. Only reached when the
// real call returned an error, never on the hot path.
#include "shim/wrappers.h"

namespace hangshim::shim {

void note_failure(Recorder* r, const CallToken& token, int result, ncclComm_t comm) noexcept {
  if (r == nullptr || !r->wants_error_text()) return;
  // The real function, not our wrapper: asked right away, NCCL's answer is the text of the call
  // that just failed (it keeps one last error per process, whatever `comm` is).
  auto last_error = HANGSHIM_REAL(ncclGetLastError);
  const char* text = last_error != nullptr ? last_error(comm) : nullptr;
  r->note_failure(token, result, text);  // reads at most kErrorTextMax bytes of it
}

}  // namespace hangshim::shim
