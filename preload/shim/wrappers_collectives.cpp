// Collectives and point-to-point: resolve, record, forward, return — generated from the table
// in entry_points.h. The result of the real call is returned untouched.
#include <string_view>

#include "shim/wrappers.h"

namespace hangshim::shim {
namespace {
inline void* as_handle(ncclComm_t comm) { return static_cast<void*>(comm); }
inline void* as_handle(cudaStream_t stream) { return static_cast<void*>(stream); }
// ncclBcast records as a broadcast, flagged so that it is named as the caller wrote it. A
// constant for each wrapper: evaluated at compile time.
consteval uint16_t bcast_form(const char* name) {
  return std::string_view(name) == "ncclBcast" ? uint16_t{hangshim::ledger::kRecordBcastForm} : uint16_t{0};
}
}  // namespace
}  // namespace hangshim::shim

#define HANGSHIM_COLLECTIVE(name, ret, params, args, op_kind, count_arg, dtype_arg, red_op_arg, peer_arg) \
  HANGSHIM_EXPORT ret name params {                                                                     \
    using namespace hangshim::shim;                                                                     \
    auto real = HANGSHIM_REAL(name);                                                                    \
    if (real == nullptr) return missing_nccl(#name);                                                    \
    OutermostCall outer;                                                                                \
    Recorder* r = recorder_for(outer);                                                                  \
    if (r == nullptr) return real args;                                                                 \
    CallInfo call;                                                                                      \
    call.op = hangshim::ledger::Op::op_kind;                                                            \
    call.comm = as_handle(comm);                                                                        \
    call.stream = as_handle(stream);                                                                    \
    call.count = static_cast<uint64_t>(count_arg);                                                      \
    call.dtype = static_cast<int32_t>(dtype_arg);                                                       \
    call.red_op = static_cast<int32_t>(red_op_arg);                                                     \
    call.peer = static_cast<int32_t>(peer_arg);                                                         \
    call.flags = bcast_form(#name);                                                                     \
    CallToken token = r->begin(call);                                                                   \
    ret result = real args;                                                                             \
    r->end(token, static_cast<int>(result));                                                            \
    if (__builtin_expect(call_failed(result), 0)) note_failure(r, token, static_cast<int>(result), comm);  \
    return result;                                                                                      \
  }

HANGSHIM_NCCL_COLLECTIVES(HANGSHIM_COLLECTIVE)
