// NCCL's group semantics: calls between ncclGroupStart and the outermost ncclGroupEnd are queued
// per thread and launched together, so sends and receives (and collectives on several
// communicators driven from one thread) progress concurrently. Outside a group each call is a
// group of one. A launch runs synchronously when no op has a real stream; otherwise it becomes
// one unit of work on the first op's stream (other streams wait for it), like a kernel.
#pragma once

#include "ops.h"

#include <nccl.h>

#include <memory>

namespace fakenccl {

ncclResult_t group_start();
ncclResult_t group_end();
// ncclGroupSimulateEnd: closes the group like ncclGroupEnd, but the outermost level runs
// nothing (as NCCL, which only estimates the group's time): the queued calls are dropped and
// take no sequence number. A purely local call.
ncclResult_t group_simulate_end(ncclSimInfo_t* info);
bool in_group();
// Runs `op` now, or queues it when inside a group.
ncclResult_t submit(std::unique_ptr<Op> op, cudaStream_t stream);
// Runs `op` now on the calling thread, even inside a group (ncclCommSplit's exchange).
ncclResult_t run_blocking(std::unique_ptr<Op> op);
// Reports an argument error of a call made inside a group: the group's ncclGroupEnd fails too
// and launches nothing, as in NCCL. Returns `result`.
ncclResult_t group_note_error(ncclResult_t result);

}  // namespace fakenccl
