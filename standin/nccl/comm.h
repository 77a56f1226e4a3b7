// The process-local communicator object behind ncclComm_t, and the registry that lets every API
// entry reject handles that are not live communicators instead of dereferencing them.
#pragma once

#include "segment.h"

#include <nccl.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

struct ncclComm {
  fakenccl::Segment segment;
  int rank = 0;
  int nranks = 0;
  int cuda_device = 0;
  std::string label;  // short name for messages: the segment name's random part

  // Numbering handed out when work is launched, always by the thread issuing the NCCL calls
  // (in program order), so that every rank numbers the same calls the same way.
  std::uint64_t rounds_launched = 0;  // rounds of the collective round protocol
  std::uint64_t collectives_launched = 0;
  std::uint64_t splits_done = 0;
  std::vector<std::uint64_t> send_chunks, recv_chunks;      // per peer, channel chunk counters
  std::vector<std::uint64_t> send_messages, recv_messages;  // per peer, message counters

  // Shared with stream workers and with ncclCommAbort from other threads.
  std::atomic<bool> aborted{false};
  // ncclCommRevoke: in-flight operations give up, new ones are refused; the communicator stays
  // until ncclCommDestroy/Abort.
  std::atomic<bool> revoked{false};
  // A nonblocking init (config.blocking = 0) joins the other ranks here while async_error says
  // ncclInProgress; comm_delete waits for it.
  std::thread init_thread;
  std::atomic<int> async_error{ncclSuccess};
  std::mutex mutex;
  std::condition_variable changed;
  std::uint64_t async_launched = 0;  // units of work enqueued on streams
  std::uint64_t async_finished = 0;
  int executing = 0;  // units running right now (any thread)
  // config.blocking = 0: collectives and ncclGroupEnd return ncclInProgress and launch in the
  // background (as NCCL's group job does); async_error says ncclInProgress until launched.
  bool nonblocking = false;
  int launching = 0;  // background launches running (under mutex); comm_wait_idle waits for them
};

namespace fakenccl {

// Creates a communicator object and registers it (not yet joined to a segment).
ncclComm* comm_new(int nranks, int rank, int cuda_device);
// Unregisters and frees (after the caller made sure no work refers to it).
void comm_delete(ncclComm* comm);
// ncclInvalidArgument with a message unless `comm` is a live communicator.
ncclResult_t comm_check(const ncclComm* comm, const char* api);
// Also rejects communicators that were aborted or hold an asynchronous error, and (as NCCL's
// ncclCommEnsureReady) nonblocking ones still in progress, unless `in_progress_ok` (the
// background launch itself).
ncclResult_t comm_check_usable(ncclComm* comm, const char* api, bool in_progress_ok = false);

// Waits until no thread and no stream runs work of `comm`.
void comm_wait_idle(ncclComm* comm);

// Legacy-stream semantics for synchronous work: wait until every unit this communicator has
// enqueued on streams has finished (forever, like a GPU stream, unless the units time out).
void comm_wait_async_idle(ncclComm* comm);
// Bookkeeping around a unit of work touching `comm`.
void comm_begin_execution(ncclComm* comm);
void comm_end_execution(ncclComm* comm, bool async);

}  // namespace fakenccl
