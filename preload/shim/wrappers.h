// Shared by the wrapper files: the export attribute and access to the process's recorder.
#pragma once

#include "shim/core/recorder.h"
#include "shim/real_nccl.h"

#define HANGSHIM_EXPORT extern "C" __attribute__((visibility("default")))

namespace hangshim::shim {

// The recorder, created at the first call that needs one; nullptr when recording is off.
Recorder* recorder() noexcept;
// The recorder if one exists already (queries never create a ledger on their own).
Recorder* existing_recorder() noexcept;

}  // namespace hangshim::shim
