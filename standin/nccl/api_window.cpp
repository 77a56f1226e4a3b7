// Memory windows and revoke (NCCL 2.27/2.28), as the real library behaves for a test:
// window (de)registration is collective — every rank calls it, a rank that skips one leaves
// the others waiting in it, and it takes a place in the communicator's collective order — and
// ncclCommRevoke cancels what is in flight and refuses new work until destroy/abort.
#include "comm.h"
#include "errors.h"
#include "export.h"
#include "group.h"
#include "ops.h"

#include <cstdint>
#include <vector>

using namespace fakenccl;

// The handle NCCL gives for a window (nccl.h leaves the struct opaque).
struct ncclWindow_vidmem {
  ncclComm* comm;
  void* buff;
  size_t size;
};

namespace {

// Everyone's window size, exchanged like an allgather on the communicator (blocking).
ncclResult_t exchange_sizes(ncclComm* comm, std::uint64_t size) {
  std::vector<std::uint64_t> all(static_cast<std::size_t>(comm->nranks));
  CollArgs args;
  args.kind = OpKind::kWindow;
  args.sendbuff = &size;
  args.recvbuff = all.data();
  args.count = 1;
  args.datatype = ncclUint64;
  return run_blocking(make_coll_op(comm, args));
}

}  // namespace

NCCL_API(ncclResult_t, ncclCommWindowRegister, ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
         int winFlags) {
  return guarded([&]() -> ncclResult_t {
    if (ncclResult_t r = comm_check_usable(comm, "ncclCommWindowRegister"); r != ncclSuccess) return r;
    if (win == nullptr) return fail(ncclInvalidArgument, "fakenccl: ncclCommWindowRegister: win is NULL");
    (void)winFlags;
    *win = nullptr;
    if (ncclResult_t r = exchange_sizes(comm, size); r != ncclSuccess) return r;
    *win = new ncclWindow_vidmem{comm, buff, size};
    return ncclSuccess;
  });
}

NCCL_API(ncclResult_t, ncclCommWindowDeregister, ncclComm_t comm, ncclWindow_t win) {
  return guarded([&]() -> ncclResult_t {
    if (ncclResult_t r = comm_check_usable(comm, "ncclCommWindowDeregister"); r != ncclSuccess) return r;
    if (win == nullptr || win->comm != comm) {
      return fail(ncclInvalidArgument, "fakenccl: ncclCommWindowDeregister: not a window of this communicator");
    }
    if (ncclResult_t r = exchange_sizes(comm, 0); r != ncclSuccess) return r;
    delete win;
    return ncclSuccess;
  });
}

NCCL_API(ncclResult_t, ncclCommRevoke, ncclComm_t comm, int revokeFlags) {
  return guarded([&]() -> ncclResult_t {
    if (ncclResult_t r = comm_check(comm, "ncclCommRevoke"); r != ncclSuccess) return r;
    if (revokeFlags != NCCL_REVOKE_DEFAULT) {
      return fail(ncclInvalidArgument, "fakenccl: ncclCommRevoke: revokeFlags must be NCCL_REVOKE_DEFAULT (0)");
    }
    comm->revoked.store(true);
    if (comm->segment.mapped()) comm->segment.wake_all();  // blocked operations re-check and give up
    comm_wait_idle(comm);                                   // quiescent, as NCCL reports it
    return ncclSuccess;
  });
}
