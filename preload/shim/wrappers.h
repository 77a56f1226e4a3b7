// Shared by the wrapper files: the export attribute and access to the process's recorder.
#pragma once

#include "shim/core/recorder.h"
#include "shim/outermost_call.h"
#include "shim/real_nccl.h"

#define HANGSHIM_EXPORT extern "C" __attribute__((visibility("default")))

namespace hangshim::shim {

// The recorder, created at the first call that needs one; nullptr when recording is off.
Recorder* recorder() noexcept;
// The recorder for a call the program made; nullptr for NCCL calling its own API from inside
// a wrapped call (outermost_call.h) and when recording is off.
inline Recorder* recorder_for(const OutermostCall& call) noexcept { return call.outermost() ? recorder() : nullptr; }
// The recorder if one exists already (queries never create a ledger on their own).
Recorder* existing_recorder() noexcept;

// A recorded call returned `result`, an error (not ncclSuccess, not ncclInProgress): keeps NCCL's
// ncclGetLastError text with it in the ledger (failure_text.cpp). Cold: out of the hot path.
__attribute__((cold, noinline)) void note_failure(Recorder* r, const CallToken& token, int result,
                                                  ncclComm_t comm) noexcept;
inline bool call_failed(ncclResult_t result) noexcept { return result != ncclSuccess && result != ncclInProgress; }

}  // namespace hangshim::shim
