// Drives a list of ops (one NCCL call, or everything between ncclGroupStart and ncclGroupEnd)
// until all complete, sleeping on the communicators' futex words in between. Without
// HANGSHIM_FAKE_TIMEOUT a list that cannot complete waits forever, as a real hang does.
#pragma once

#include "ops.h"
#include "wait.h"

#include <memory>
#include <vector>

namespace fakenccl {

using OpList = std::vector<std::unique_ptr<Op>>;

// ncclSuccess when every op completed. On a timeout or an abort: the error code, the last error
// text naming what each unfinished op waited for, and (timeout) the communicators' async error.
ncclResult_t run_ops(OpList& ops, const Deadline& deadline);

}  // namespace fakenccl
