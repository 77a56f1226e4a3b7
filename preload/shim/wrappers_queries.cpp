// Queries: forwarded untouched. Three also feed an existing ledger (never create one): the
// library's version, and ncclCommGetAsyncError's answer (a nonblocking communicator becoming
// ready, or an asynchronous error such as a remote failure).
#include "shim/core/clock.h"
#include "shim/wrappers.h"

#define HANGSHIM_FORWARD(name, ret, params, args)  \
  HANGSHIM_EXPORT ret name params {                \
    auto real = HANGSHIM_REAL(name);               \
    if (real == nullptr) return missing_nccl(#name); \
    return real args;                              \
  }

namespace hangshim::shim {
namespace {
const char* missing_string(const char* name) {
  missing_nccl(name);
  return "hangshim: no NCCL library found in this process";
}
}  // namespace
}  // namespace hangshim::shim

using namespace hangshim::shim;

HANGSHIM_FORWARD(ncclGetUniqueId, ncclResult_t, (ncclUniqueId * uniqueId), (uniqueId))
HANGSHIM_FORWARD(ncclCommCount, ncclResult_t, (const ncclComm_t comm, int* count), (comm, count))
HANGSHIM_FORWARD(ncclCommUserRank, ncclResult_t, (const ncclComm_t comm, int* rank), (comm, rank))
HANGSHIM_FORWARD(ncclCommCuDevice, ncclResult_t, (const ncclComm_t comm, int* device), (comm, device))

HANGSHIM_EXPORT ncclResult_t ncclGetVersion(int* version) {
  auto real = HANGSHIM_REAL(ncclGetVersion);
  if (real == nullptr) return missing_nccl("ncclGetVersion");
  OutermostCall outer;
  ncclResult_t result = real(version);
  if (Recorder* r = existing_recorder(); r != nullptr && outer.outermost() && result == ncclSuccess && version != nullptr) {
    r->nccl_version(*version);
  }
  return result;
}

HANGSHIM_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  auto real = HANGSHIM_REAL(ncclCommGetAsyncError);
  if (real == nullptr) return missing_nccl("ncclCommGetAsyncError");
  OutermostCall outer;
  uint64_t asked_ns = now_ns();  // calls returning ncclInProgress after this are not answered here
  ncclResult_t result = real(comm, asyncError);
  if (Recorder* r = existing_recorder(); r != nullptr && outer.outermost() && result == ncclSuccess && asyncError != nullptr) {
    // An asynchronous error (rare): NCCL's words for it, from the real ncclGetLastError.
    const char* text = nullptr;
    if (call_failed(*asyncError) && r->wants_error_text()) {
      if (auto last_error = HANGSHIM_REAL(ncclGetLastError); last_error != nullptr) text = last_error(comm);
    }
    r->async_status(comm, static_cast<int>(*asyncError), asked_ns, text);
  }
  return result;
}

HANGSHIM_EXPORT const char* ncclGetErrorString(ncclResult_t result) {
  auto real = HANGSHIM_REAL(ncclGetErrorString);
  return real != nullptr ? real(result) : missing_string("ncclGetErrorString");
}

HANGSHIM_EXPORT const char* ncclGetLastError(ncclComm_t comm) {
  auto real = HANGSHIM_REAL(ncclGetLastError);
  return real != nullptr ? real(comm) : missing_string("ncclGetLastError");
}
