#include "group.h"

#include "comm.h"
#include "cuda_bridge.h"
#include "engine.h"
#include "errors.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace fakenccl {
namespace {

struct Pending {
  std::unique_ptr<Op> op;
  cudaStream_t stream;
};

struct GroupState {
  int depth = 0;
  std::vector<Pending> pending;
  ncclResult_t error = ncclSuccess;
};

thread_local GroupState t_group;

// A launch that runs on a stream worker. Shared by the host function on the first stream and the
// waits enqueued on any other stream.
struct Unit {
  OpList ops;
  std::vector<ncclComm*> comms;
  std::mutex mutex;
  std::condition_variable finished_cv;
  bool finished = false;
  ncclResult_t result = ncclSuccess;

  void wait() {
    std::unique_lock lock(mutex);
    finished_cv.wait(lock, [&] { return finished; });
  }
};

std::vector<ncclComm*> distinct_comms(const OpList& ops) {
  std::vector<ncclComm*> comms;
  for (const auto& op : ops) {
    if (std::find(comms.begin(), comms.end(), op->comm()) == comms.end()) comms.push_back(op->comm());
  }
  return comms;
}

void finish_unit(Unit& unit, ncclResult_t result) {
  for (ncclComm* comm : unit.comms) {
    if (result != ncclSuccess) {
      // Kept over ncclSuccess, and over ncclInProgress (a nonblocking launch not yet finished).
      int expected = ncclSuccess;
      if (!comm->async_error.compare_exchange_strong(expected, result) && expected == ncclInProgress) {
        comm->async_error.compare_exchange_strong(expected, result);
      }
    }
    comm_end_execution(comm, true);
  }
  {
    std::lock_guard lock(unit.mutex);
    unit.result = result;
    unit.finished = true;
  }
  unit.finished_cv.notify_all();
}

// Host function on the unit's stream: the "kernel". Blocks for as long as the collective does.
void run_unit(void* data) {
  std::unique_ptr<std::shared_ptr<Unit>> holder(static_cast<std::shared_ptr<Unit>*>(data));
  Unit& unit = **holder;
  for (ncclComm* comm : unit.comms) comm_begin_execution(comm);
  ncclResult_t result = ncclInternalError;
  try {
    result = run_ops(unit.ops, Deadline::for_operation());
  } catch (...) {
    set_last_error("fakenccl: internal error while running a collective on a stream");
  }
  finish_unit(unit, result);
}

// Host function on any further stream of the group: that stream waits for the unit.
void wait_unit(void* data) {
  std::unique_ptr<std::shared_ptr<Unit>> holder(static_cast<std::shared_ptr<Unit>*>(data));
  (*holder)->wait();
}

ncclResult_t launch_sync(OpList& ops, bool background) {
  const std::vector<ncclComm*> comms = distinct_comms(ops);
  for (ncclComm* comm : comms) {
    comm_wait_async_idle(comm);  // the legacy stream orders after earlier stream work ...
    if (ncclResult_t r = comm_check_usable(comm, "ncclGroupEnd", background); r != ncclSuccess) return r;  // ... which may have failed
  }
  for (ncclComm* comm : comms) comm_begin_execution(comm);
  const ncclResult_t result = run_ops(ops, Deadline::for_operation());
  for (ncclComm* comm : comms) comm_end_execution(comm, false);
  return result;
}

ncclResult_t launch(std::vector<Pending> pending, bool background = false) {
  std::vector<cudaStream_t> streams;
  bool any_sync = false;
  for (const Pending& p : pending) {
    if (ncclResult_t r = comm_check_usable(p.op->comm(), "ncclGroupEnd", background); r != ncclSuccess) return r;
    if (is_synchronous_stream(p.stream)) {
      any_sync = true;
    } else if (std::find(streams.begin(), streams.end(), p.stream) == streams.end()) {
      streams.push_back(p.stream);
    }
  }
  if (!streams.empty()) {
    if (ncclResult_t r = check_stream_support(); r != ncclSuccess) return r;
  }
  OpList ops;
  for (Pending& p : pending) {
    p.op->number();
    ops.push_back(std::move(p.op));
  }
  if (streams.empty()) return launch_sync(ops, background);

  auto unit = std::make_shared<Unit>();
  unit->comms = distinct_comms(ops);
  unit->ops = std::move(ops);
  for (ncclComm* comm : unit->comms) {
    std::lock_guard lock(comm->mutex);
    ++comm->async_launched;
  }
  auto* holder = new std::shared_ptr<Unit>(unit);
  if (ncclResult_t r = launch_on_stream(streams.front(), run_unit, holder); r != ncclSuccess) {
    delete holder;
    finish_unit(*unit, r);
    return r;
  }
  for (std::size_t i = 1; i < streams.size(); ++i) {
    auto* waiter = new std::shared_ptr<Unit>(unit);
    if (ncclResult_t r = launch_on_stream(streams[i], wait_unit, waiter); r != ncclSuccess) {
      delete waiter;
      return r;
    }
  }
  if (any_sync) {  // a NULL stream in the group: the call returns when the work is done
    unit->wait();
    return unit->result;
  }
  return ncclSuccess;
}

// Nonblocking communicators (config.blocking = 0): as NCCL's group job, the launch runs in the
// background and the call returns ncclInProgress; ncclCommGetAsyncError says ncclInProgress until
// the work is launched (on a stream), or done (the NULL stream: the launch waits for it), and
// then ncclSuccess or the error. The communicators refuse new work meanwhile.
ncclResult_t launch_in_background(std::vector<Pending> pending) {
  std::vector<ncclComm*> comms;
  for (const Pending& p : pending) {
    if (ncclResult_t r = comm_check_usable(p.op->comm(), "ncclGroupEnd"); r != ncclSuccess) return r;
    if (std::find(comms.begin(), comms.end(), p.op->comm()) == comms.end()) comms.push_back(p.op->comm());
  }
  for (ncclComm* comm : comms) {
    std::lock_guard lock(comm->mutex);
    ++comm->launching;
    comm->async_error.store(ncclInProgress);
  }
  std::thread([pending = std::move(pending), comms]() mutable {
    ncclResult_t result = ncclInternalError;
    try {
      result = launch(std::move(pending), true);
    } catch (...) {
      set_last_error("fakenccl: internal error while launching a nonblocking group");
    }
    for (ncclComm* comm : comms) {
      // Notified under the lock: once `launching` is 0, ncclCommDestroy may free the comm.
      std::lock_guard lock(comm->mutex);
      int expected = ncclInProgress;
      comm->async_error.compare_exchange_strong(expected, result);
      --comm->launching;
      comm->changed.notify_all();
    }
  }).detach();
  return ncclInProgress;
}

bool any_nonblocking(const std::vector<Pending>& pending) {
  return std::any_of(pending.begin(), pending.end(), [](const Pending& p) { return p.op->comm()->nonblocking; });
}

}  // namespace

ncclResult_t group_start() {
  ++t_group.depth;
  return ncclSuccess;
}

ncclResult_t group_end() {
  if (t_group.depth == 0) {
    return fail(ncclInvalidUsage, "fakenccl: ncclGroupEnd without a matching ncclGroupStart");
  }
  if (--t_group.depth > 0) return ncclSuccess;
  std::vector<Pending> pending = std::move(t_group.pending);
  t_group.pending.clear();
  const ncclResult_t error = t_group.error;
  t_group.error = ncclSuccess;
  if (error != ncclSuccess) return error;  // the group is cancelled; last error says why
  if (any_nonblocking(pending)) return launch_in_background(std::move(pending));
  return launch(std::move(pending));
}

ncclResult_t group_simulate_end(ncclSimInfo_t* info) {
  // As NCCL: the struct must be initialised with NCCL_SIM_INFO_INITIALIZER.
  constexpr unsigned kSimInfoMagic = 0x74685283;
  if (info == nullptr || info->magic != kSimInfoMagic || info->size < sizeof(ncclSimInfo_t)) {
    return fail(ncclInvalidArgument, "fakenccl: ncclGroupSimulateEnd: simInfo is not initialised with NCCL_SIM_INFO_INITIALIZER");
  }
  if (t_group.depth == 0) {
    return fail(ncclInvalidUsage, "fakenccl: ncclGroupSimulateEnd without a matching ncclGroupStart");
  }
  if (--t_group.depth > 0) return ncclSuccess;
  // A made-up estimate: 10 us per queued call (the stand-in has no cost model).
  info->estimatedTime = 10.0f * static_cast<float>(t_group.pending.size());
  t_group.pending.clear();
  t_group.error = ncclSuccess;
  return ncclSuccess;
}

bool in_group() { return t_group.depth > 0; }

ncclResult_t submit(std::unique_ptr<Op> op, cudaStream_t stream) {
  if (in_group()) {
    t_group.pending.push_back(Pending{std::move(op), stream});
    return ncclSuccess;
  }
  std::vector<Pending> one;
  one.push_back(Pending{std::move(op), stream});
  if (any_nonblocking(one)) return launch_in_background(std::move(one));
  return launch(std::move(one));
}

ncclResult_t run_blocking(std::unique_ptr<Op> op) {
  OpList ops;
  op->number();
  ops.push_back(std::move(op));
  return launch_sync(ops, false);
}

ncclResult_t group_note_error(ncclResult_t result) {
  if (in_group() && t_group.error == ncclSuccess) t_group.error = result;
  return result;
}

}  // namespace fakenccl
