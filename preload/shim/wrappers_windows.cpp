// Memory windows (NCCL 2.27+): ncclCommWindowRegister/Deregister are collective — every rank of
// the communicator must make the call, and a rank that skips one leaves the others waiting in
// it — so they are recorded as collectives: a collective sequence number on the communicator,
// the window's size as the count. They run on the host (no stream): done when they return.
#include "shim/wrappers.h"

using namespace hangshim::shim;
using hangshim::ledger::Op;

namespace {

template <class Call>
ncclResult_t record_window(Op op, ncclComm_t comm, size_t size, Call&& call) {
  OutermostCall outer;
  Recorder* r = recorder_for(outer);
  if (r == nullptr) return call();
  CallInfo info;
  info.op = op;
  info.comm = static_cast<void*>(comm);
  info.count = static_cast<uint64_t>(size);
  CallToken token = r->begin(info);
  ncclResult_t result = call();
  r->end(token, static_cast<int>(result));
  return result;
}

}  // namespace

HANGSHIM_EXPORT ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
                                                    int winFlags) {
  auto real = HANGSHIM_REAL(ncclCommWindowRegister);
  if (real == nullptr) return missing_nccl("ncclCommWindowRegister");
  return record_window(Op::WindowRegister, comm, size, [&] { return real(comm, buff, size, win, winFlags); });
}

HANGSHIM_EXPORT ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  auto real = HANGSHIM_REAL(ncclCommWindowDeregister);
  if (real == nullptr) return missing_nccl("ncclCommWindowDeregister");
  return record_window(Op::WindowDeregister, comm, 0, [&] { return real(comm, win); });
}
