#include "comm.h"

#include "errors.h"

#include <unordered_set>

namespace fakenccl {
namespace {

struct Registry {
  std::mutex mutex;
  std::unordered_set<const ncclComm*> live;
};

Registry& registry() {
  static auto* r = new Registry;  // never destroyed: stream workers may outlive static teardown
  return *r;
}

}  // namespace

ncclComm* comm_new(int nranks, int rank, int cuda_device) {
  auto* comm = new ncclComm;
  comm->nranks = nranks;
  comm->rank = rank;
  comm->cuda_device = cuda_device;
  const auto n = static_cast<std::size_t>(nranks);
  comm->send_chunks.assign(n, 0);
  comm->recv_chunks.assign(n, 0);
  comm->send_messages.assign(n, 0);
  comm->recv_messages.assign(n, 0);
  std::lock_guard lock(registry().mutex);
  registry().live.insert(comm);
  return comm;
}

void comm_delete(ncclComm* comm) {
  if (comm->init_thread.joinable()) {
    comm->aborted.store(true);  // a nonblocking init still joining gives up
    if (comm->segment.mapped()) comm->segment.wake_all();
    comm->init_thread.join();
  }
  {
    std::lock_guard lock(registry().mutex);
    registry().live.erase(comm);
  }
  delete comm;
}

ncclResult_t comm_check(const ncclComm* comm, const char* api) {
  if (comm == nullptr) return fail(ncclInvalidArgument, "fakenccl: {}: comm is NULL", api);
  std::lock_guard lock(registry().mutex);
  if (registry().live.count(comm) == 0) {
    return fail(ncclInvalidArgument,
                "fakenccl: {}: {} is not a live communicator (destroyed, or never created)", api,
                static_cast<const void*>(comm));
  }
  return ncclSuccess;
}

ncclResult_t comm_check_usable(ncclComm* comm, const char* api, bool in_progress_ok) {
  if (ncclResult_t r = comm_check(comm, api); r != ncclSuccess) return r;
  if (comm->aborted.load()) {
    return fail(ncclInvalidUsage, "fakenccl: {}: communicator {} rank {} was aborted", api,
                comm->label, comm->rank);
  }
  if (comm->revoked.load()) {
    return fail(ncclInvalidUsage, "fakenccl: {}: communicator {} rank {} was revoked; destroy or shrink it", api,
                comm->label, comm->rank);
  }
  if (const int e = comm->async_error.load(); e == ncclInProgress) {
    if (!in_progress_ok) {
      return fail(ncclInvalidArgument,
                  "fakenccl: {}: communicator {} rank {} is not ready: an operation is in progress (poll "
                  "ncclCommGetAsyncError until it is no longer ncclInProgress)",
                  api, comm->label, comm->rank);
    }
  } else if (e != ncclSuccess) {
    return fail(static_cast<ncclResult_t>(e),
                "fakenccl: {}: communicator {} rank {} has failed earlier ({}); destroy or abort it",
                api, comm->label, comm->rank, error_string(static_cast<ncclResult_t>(e)));
  }
  return ncclSuccess;
}

void comm_wait_idle(ncclComm* comm) {
  std::unique_lock lock(comm->mutex);
  comm->changed.wait(lock, [&] {
    return comm->executing == 0 && comm->launching == 0 && comm->async_finished == comm->async_launched;
  });
}

void comm_wait_async_idle(ncclComm* comm) {
  std::unique_lock lock(comm->mutex);
  const std::uint64_t target = comm->async_launched;
  comm->changed.wait(lock, [&] { return comm->async_finished >= target; });
}

void comm_begin_execution(ncclComm* comm) {
  std::lock_guard lock(comm->mutex);
  ++comm->executing;
}

void comm_end_execution(ncclComm* comm, bool async) {
  {
    std::lock_guard lock(comm->mutex);
    --comm->executing;
    if (async) ++comm->async_finished;
  }
  comm->changed.notify_all();
}

}  // namespace fakenccl
