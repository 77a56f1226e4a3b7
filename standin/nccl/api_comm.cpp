// Communicator life cycle: unique ids, init (one rank per process, all in one process, or from
// a split), finalize/destroy/abort, and the queries.
#include "comm.h"
#include "cuda_bridge.h"
#include "engine.h"
#include "errors.h"
#include "export.h"
#include "group.h"
#include "unique_id.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <numeric>
#include <string_view>
#include <vector>

using namespace fakenccl;

namespace {

constexpr unsigned kConfigMagic = 0xcafebeef;  // NCCL_CONFIG_INITIALIZER's magic

ncclResult_t check_config(const ncclConfig_t* config, const char* api) {
  if (config != nullptr && config->magic != kConfigMagic) {
    return fail(ncclInvalidArgument,
                "fakenccl: {}: config was not initialized with NCCL_CONFIG_INITIALIZER", api);
  }
  return ncclSuccess;
}

// config.blocking = 0 (NCCL_CONFIG_INITIALIZER leaves it undefined: blocking).
bool nonblocking(const ncclConfig_t* config) {
  constexpr size_t kNeeded = offsetof(ncclConfig_t, blocking) + sizeof(int);
  return config != nullptr && config->size >= kNeeded && config->blocking == 0;
}

// HANGSHIM_FAKE_INIT_ERROR=<ncclResult name> (test use): every communicator init in this
// process fails at once, before joining anyone, as the real NCCL does on a machine without a
// usable GPU (ncclUnhandledCudaError) or network (ncclSystemError), with a text of the kind the
// real ncclGetLastError gives. The other ranks then wait for this one, as with the real library.
// A nonblocking init (config.blocking = 0) fails the same way, except that errors other than
// ncclUnhandledCudaError come later, from its background work (ncclCommGetAsyncError).
ncclResult_t injected_init_error(const char* api) {
  const char* raw = std::getenv("HANGSHIM_FAKE_INIT_ERROR");
  if (raw == nullptr || *raw == '\0') return ncclSuccess;
  const std::string_view want = raw;
  if (want == "ncclUnhandledCudaError") {
    // NCCL 2.28.9's own words on a machine whose driver is older than its CUDA runtime.
    return fail(ncclUnhandledCudaError, "Cuda failure 'CUDA driver version is insufficient for CUDA runtime version'");
  }
  if (want == "ncclSystemError") {
    return fail(ncclSystemError, "fakenccl: {}: socket connect to the root failed: Connection refused", api);
  }
  if (want == "ncclInternalError") return fail(ncclInternalError, "fakenccl: {}: internal error (injected)", api);
  if (want == "ncclInvalidUsage") return fail(ncclInvalidUsage, "fakenccl: {}: invalid usage (injected)", api);
  if (want == "ncclRemoteError") return fail(ncclRemoteError, "fakenccl: {}: a remote rank failed (injected)", api);
  return fail(ncclInvalidArgument, "fakenccl: HANGSHIM_FAKE_INIT_ERROR={} is not one of ncclUnhandledCudaError, "
              "ncclSystemError, ncclInternalError, ncclInvalidUsage, ncclRemoteError", raw);
}

// Creates the communicator object and joins its segment. With `wait`, returns only when every
// rank joined (ncclCommInitRank blocks like that); inside a group the wait happens at GroupEnd.
ncclResult_t init_rank(ncclComm_t* out, int nranks, const std::string& name, int rank, int device,
                       bool wait, const char* api, bool blocking = true) {
  if (out == nullptr) return fail(ncclInvalidArgument, "fakenccl: {}: comm pointer is NULL", api);
  *out = nullptr;
  // An injected failure comes at once, as the real NCCL fails without a usable GPU even for a
  // nonblocking init; a nonblocking init's other failures (network, a remote rank) come from
  // its background work, through ncclCommGetAsyncError.
  const char* injected = std::getenv("HANGSHIM_FAKE_INIT_ERROR");
  const bool inject_later = !blocking && injected != nullptr && *injected != '\0' &&
                            std::string_view(injected) != "ncclUnhandledCudaError";
  if (!inject_later) {
    if (ncclResult_t r = injected_init_error(api); r != ncclSuccess) return r;
  }
  if (nranks < 1 || nranks > kMaxRanks) {
    return fail(ncclInvalidArgument, "fakenccl: {}: nranks {} is outside 1..{} (the stand-in's limit)",
                api, nranks, kMaxRanks);
  }
  if (rank < 0 || rank >= nranks) {
    return fail(ncclInvalidArgument, "fakenccl: {}: rank {} is outside 0..{}", api, rank, nranks - 1);
  }
  if (const std::string bad = timeout_setting_error(); !bad.empty()) {
    return fail(ncclInvalidArgument, "fakenccl: {}", bad);
  }
  ncclComm* comm = comm_new(nranks, rank, device);
  comm->label = name.substr(name.rfind('.') + 1, 8);
  comm->nonblocking = !blocking;
  if (!blocking) {
    // As NCCL does for config.blocking = 0: the handle now, ncclInProgress, and the joining in
    // the background; ncclCommGetAsyncError says ncclInProgress until it is done (or failed).
    comm->async_error.store(ncclInProgress);
    *out = comm;
    comm->init_thread = std::thread([comm, name, nranks, rank, inject_later, api = std::string(api)] {
      if (inject_later) {
        comm->async_error.store(injected_init_error(api.c_str()));
        return;
      }
      ncclResult_t r = comm->segment.join(name, nranks, rank, Deadline::for_operation(), &comm->aborted);
      if (r == ncclSuccess) {
        OpList ops;
        ops.push_back(make_join_wait_op(comm));
        r = run_ops(ops, Deadline::for_operation());
      }
      comm->async_error.store(r);
    });
    return ncclInProgress;
  }
  if (ncclResult_t r = comm->segment.join(name, nranks, rank, Deadline::for_operation(), &comm->aborted);
      r != ncclSuccess) {
    comm_delete(comm);
    return r;
  }
  *out = comm;
  if (in_group()) return submit(make_join_wait_op(comm), nullptr);
  if (wait) {
    OpList ops;
    ops.push_back(make_join_wait_op(comm));
    if (ncclResult_t r = run_ops(ops, Deadline::for_operation()); r != ncclSuccess) {
      *out = nullptr;
      comm_delete(comm);
      return r;
    }
    debug_info(fmt::format("comm {} {} rank {} nRanks {} cudaDev {} - Init COMPLETE",
                           static_cast<const void*>(comm), comm->label, rank, nranks, device));
  }
  return ncclSuccess;
}

void wait_idle(ncclComm* comm) { comm_wait_idle(comm); }

// The getters (ncclCommCount, ncclCommUserRank, ncclCommCuDevice): a valid communicator, a
// non-NULL out-pointer, and one field of the communicator copied out.
ncclResult_t copy_out(const ncclComm_t comm, const char* api, int* out, const char* out_name, int ncclComm::*field) {
  if (ncclResult_t r = comm_check(comm, api); r != ncclSuccess) return r;
  if (out == nullptr) return fail(ncclInvalidArgument, "fakenccl: {}: {} is NULL", api, out_name);
  *out = comm->*field;
  return ncclSuccess;
}

}  // namespace

NCCL_API(ncclResult_t, ncclGetVersion, int* version) {
  if (version == nullptr) return fail(ncclInvalidArgument, "fakenccl: ncclGetVersion: version is NULL");
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

NCCL_API(ncclResult_t, ncclGetUniqueId, ncclUniqueId* uniqueId) {
  return guarded([&] {
    if (uniqueId == nullptr) return fail(ncclInvalidArgument, "fakenccl: ncclGetUniqueId: uniqueId is NULL");
    return make_unique_id(uniqueId);
  });
}

NCCL_API(ncclResult_t, ncclCommInitRankConfig, ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
         ncclConfig_t* config) {
  return guarded([&] {
    if (ncclResult_t r = check_config(config, "ncclCommInitRankConfig"); r != ncclSuccess) return r;
    std::string name;
    if (ncclResult_t r = segment_name_for_id(commId, name); r != ncclSuccess) return r;
    return init_rank(comm, nranks, name, rank, current_cuda_device(), true, "ncclCommInitRankConfig",
                     !nonblocking(config));
  });
}

NCCL_API(ncclResult_t, ncclCommInitRank, ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  return guarded([&] {
    std::string name;
    if (ncclResult_t r = segment_name_for_id(commId, name); r != ncclSuccess) return r;
    return init_rank(comm, nranks, name, rank, current_cuda_device(), true, "ncclCommInitRank");
  });
}

NCCL_API(ncclResult_t, ncclCommInitRankScalable, ncclComm_t* newcomm, int nranks, int myrank, int nId,
         ncclUniqueId* commIds, ncclConfig_t* config) {
  return guarded([&] {
    if (nId < 1 || commIds == nullptr) {
      return fail(ncclInvalidArgument, "fakenccl: ncclCommInitRankScalable: needs at least one unique id");
    }
    if (ncclResult_t r = check_config(config, "ncclCommInitRankScalable"); r != ncclSuccess) return r;
    std::string name;  // every rank passes the same ids in the same order: the first one names it
    if (ncclResult_t r = segment_name_for_id(commIds[0], name); r != ncclSuccess) return r;
    return init_rank(newcomm, nranks, name, myrank, current_cuda_device(), true, "ncclCommInitRankScalable");
  });
}

NCCL_API(ncclResult_t, ncclCommInitAll, ncclComm_t* comms, int ndev, const int* devlist) {
  return guarded([&] {
    if (comms == nullptr) return fail(ncclInvalidArgument, "fakenccl: ncclCommInitAll: comms is NULL");
    if (ndev < 1) return fail(ncclInvalidArgument, "fakenccl: ncclCommInitAll: ndev {} < 1", ndev);
    ncclUniqueId id;
    if (ncclResult_t r = make_unique_id(&id); r != ncclSuccess) return r;
    std::string name;
    if (ncclResult_t r = segment_name_for_id(id, name); r != ncclSuccess) return r;
    OpList waits;
    for (int i = 0; i < ndev; ++i) {
      const int device = devlist != nullptr ? devlist[i] : i;
      if (ncclResult_t r = init_rank(&comms[i], ndev, name, i, device, false, "ncclCommInitAll"); r != ncclSuccess) {
        for (int j = 0; j < i; ++j) {
          comm_delete(comms[j]);
          comms[j] = nullptr;
        }
        return r;
      }
      waits.push_back(make_join_wait_op(comms[i]));
    }
    return run_ops(waits, Deadline::for_operation());
  });
}

NCCL_API(ncclResult_t, ncclCommSplit, ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
         ncclConfig_t* config) {
  return guarded([&]() -> ncclResult_t {
    if (ncclResult_t r = comm_check_usable(comm, "ncclCommSplit"); r != ncclSuccess) return r;
    if (newcomm == nullptr) return fail(ncclInvalidArgument, "fakenccl: ncclCommSplit: newcomm is NULL");
    if (color < 0 && color != NCCL_SPLIT_NOCOLOR) {
      return fail(ncclInvalidArgument, "fakenccl: ncclCommSplit: color {} is negative (use NCCL_SPLIT_NOCOLOR)", color);
    }
    if (ncclResult_t r = check_config(config, "ncclCommSplit"); r != ncclSuccess) return r;
    *newcomm = nullptr;
    // Everyone's (color, key), exchanged like an allgather on the parent (blocking, even inside
    // a group).
    std::int32_t mine[2] = {color, key};
    std::vector<std::int32_t> all(2 * static_cast<std::size_t>(comm->nranks));
    CollArgs args;
    args.kind = OpKind::kSplit;
    args.sendbuff = mine;
    args.recvbuff = all.data();
    args.count = 2;
    args.datatype = ncclInt32;
    if (ncclResult_t r = run_blocking(make_coll_op(comm, args)); r != ncclSuccess) return r;
    const std::uint64_t split_index = ++comm->splits_done;
    if (color == NCCL_SPLIT_NOCOLOR) return ncclSuccess;
    std::vector<int> members;
    for (int r = 0; r < comm->nranks; ++r) {
      if (all[2 * static_cast<std::size_t>(r)] == color) members.push_back(r);
    }
    std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
      return all[2 * static_cast<std::size_t>(a) + 1] < all[2 * static_cast<std::size_t>(b) + 1];
    });
    const auto me = std::find(members.begin(), members.end(), comm->rank) - members.begin();
    return init_rank(newcomm, static_cast<int>(members.size()),
                     segment_name_for_split(comm->segment.name(), split_index, color),
                     static_cast<int>(me), comm->cuda_device, true, "ncclCommSplit");
  });
}

NCCL_API(ncclResult_t, ncclCommFinalize, ncclComm_t comm) {
  return guarded([&] {
    if (ncclResult_t r = comm_check(comm, "ncclCommFinalize"); r != ncclSuccess) return r;
    comm_wait_async_idle(comm);  // flushes everything issued so far
    return ncclSuccess;
  });
}

NCCL_API(ncclResult_t, ncclCommDestroy, ncclComm_t comm) {
  return guarded([&] {
    if (comm == nullptr) return ncclSuccess;  // NCCL accepts NULL here
    if (ncclResult_t r = comm_check(comm, "ncclCommDestroy"); r != ncclSuccess) return r;
    wait_idle(comm);
    debug_info(fmt::format("comm {} rank {} nRanks {} - Destroy COMPLETE", static_cast<const void*>(comm),
                           comm->rank, comm->nranks));
    comm_delete(comm);
    return ncclSuccess;
  });
}

NCCL_API(ncclResult_t, ncclCommAbort, ncclComm_t comm) {
  return guarded([&] {
    if (comm == nullptr) return ncclSuccess;
    if (ncclResult_t r = comm_check(comm, "ncclCommAbort"); r != ncclSuccess) return r;
    comm->aborted.store(true);
    if (comm->segment.mapped()) comm->segment.wake_all();  // blocked ops re-check and give up
    wait_idle(comm);
    comm_delete(comm);
    return ncclSuccess;
  });
}

NCCL_API(ncclResult_t, ncclCommCount, const ncclComm_t comm, int* count) {
  return guarded([&] { return copy_out(comm, "ncclCommCount", count, "count", &ncclComm::nranks); });
}

NCCL_API(ncclResult_t, ncclCommUserRank, const ncclComm_t comm, int* rank) {
  return guarded([&] { return copy_out(comm, "ncclCommUserRank", rank, "rank", &ncclComm::rank); });
}

NCCL_API(ncclResult_t, ncclCommCuDevice, const ncclComm_t comm, int* device) {
  return guarded([&] { return copy_out(comm, "ncclCommCuDevice", device, "device", &ncclComm::cuda_device); });
}

NCCL_API(ncclResult_t, ncclCommGetAsyncError, ncclComm_t comm, ncclResult_t* asyncError) {
  return guarded([&] {
    if (ncclResult_t r = comm_check(comm, "ncclCommGetAsyncError"); r != ncclSuccess) return r;
    if (asyncError == nullptr) return fail(ncclInvalidArgument, "fakenccl: ncclCommGetAsyncError: asyncError is NULL");
    *asyncError = static_cast<ncclResult_t>(comm->async_error.load());
    return ncclSuccess;
  });
}
