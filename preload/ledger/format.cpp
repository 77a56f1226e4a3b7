#include "ledger/format.h"

#include <fmt/format.h>

namespace hangshim::ledger {

const char* op_name(uint8_t op) noexcept {
  switch (static_cast<Op>(op)) {
    case Op::None: return "none";
    case Op::AllReduce: return "all_reduce";
    case Op::Broadcast: return "broadcast";
    case Op::Reduce: return "reduce";
    case Op::AllGather: return "all_gather";
    case Op::ReduceScatter: return "reduce_scatter";
    case Op::AlltoAll: return "all_to_all";
    case Op::Gather: return "gather";
    case Op::Scatter: return "scatter";
    case Op::Send: return "send";
    case Op::Recv: return "recv";
    case Op::CommInitRank: return "comm_init_rank";
    case Op::CommInitAll: return "comm_init_all";
    case Op::CommInitRankScalable: return "comm_init_rank_scalable";
    case Op::CommSplit: return "comm_split";
    case Op::CommShrink: return "comm_shrink";
    case Op::CommFinalize: return "comm_finalize";
    case Op::CommDestroy: return "comm_destroy";
    case Op::CommAbort: return "comm_abort";
    case Op::WindowRegister: return "window_register";
    case Op::WindowDeregister: return "window_deregister";
    case Op::CommRevoke: return "comm_revoke";
  }
  return "unknown";
}

const char* dtype_name(uint8_t dtype) noexcept {
  static const char* const names[] = {"int8",    "uint8",   "int32",    "uint32",     "int64",     "uint64",
                                      "float16", "float32", "float64", "bfloat16", "float8e4m3", "float8e5m2"};
  if (dtype == 255) return "";
  return dtype < sizeof(names) / sizeof(names[0]) ? names[dtype] : "?";
}

size_t dtype_size(uint8_t dtype) noexcept {
  static const unsigned char sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  return dtype < sizeof(sizes) ? sizes[dtype] : 0;
}

const char* red_op_name(int32_t red_op) noexcept {
  switch (red_op) {
    case -1: return "";
    case 0: return "sum";
    case 1: return "prod";
    case 2: return "max";
    case 3: return "min";
    case 4: return "avg";
    default: return red_op > 4 ? "premulsum" : "?";
  }
}

const char* process_state_name(uint32_t state) noexcept {
  switch (static_cast<ProcessState>(state)) {
    case ProcessState::Starting: return "starting";
    case ProcessState::Running: return "running";
    case ProcessState::Stalled: return "stalled";
    case ProcessState::Exited: return "exited";
  }
  return "unknown";
}

const char* comm_state_name(uint32_t state) noexcept {
  switch (static_cast<CommState>(state)) {
    case CommState::Empty: return "empty";
    case CommState::Initializing: return "initializing";
    case CommState::Active: return "active";
    case CommState::Failed: return "failed";
    case CommState::Finalized: return "finalized";
    case CommState::Destroyed: return "destroyed";
    case CommState::Aborted: return "aborted";
  }
  return "unknown";
}

const char* key_kind_name(uint32_t kind) noexcept {
  switch (static_cast<KeyKind>(kind)) {
    case KeyKind::None: return "none";
    case KeyKind::UniqueId: return "unique_id";
    case KeyKind::UniqueIds: return "unique_ids";
    case KeyKind::Split: return "split";
    case KeyKind::Shrink: return "shrink";
    case KeyKind::InitAll: return "init_all";
    case KeyKind::Unknown: return "unknown";
  }
  return "invalid";
}

std::string result_name(int32_t result) {
  // nccl.h's ncclResult_t, in order (the values are NCCL's ABI).
  static const char* const names[] = {"ncclSuccess",      "ncclUnhandledCudaError", "ncclSystemError",
                                      "ncclInternalError", "ncclInvalidArgument",   "ncclInvalidUsage",
                                      "ncclRemoteError",   "ncclInProgress"};
  if (result >= 0 && result < static_cast<int32_t>(sizeof(names) / sizeof(names[0]))) return names[result];
  if (result == -1) return "none";  // still inside the call
  return fmt::format("ncclResult {}", result);
}

const char* nccl_function_name(uint8_t op) noexcept {
  switch (static_cast<Op>(op)) {
    case Op::None: return "?";
    case Op::AllReduce: return "ncclAllReduce";
    case Op::Broadcast: return "ncclBroadcast";
    case Op::Reduce: return "ncclReduce";
    case Op::AllGather: return "ncclAllGather";
    case Op::ReduceScatter: return "ncclReduceScatter";
    case Op::AlltoAll: return "ncclAlltoAll";
    case Op::Gather: return "ncclGather";
    case Op::Scatter: return "ncclScatter";
    case Op::Send: return "ncclSend";
    case Op::Recv: return "ncclRecv";
    case Op::CommInitRank: return "ncclCommInitRank";
    case Op::CommInitAll: return "ncclCommInitAll";
    case Op::CommInitRankScalable: return "ncclCommInitRankScalable";
    case Op::CommSplit: return "ncclCommSplit";
    case Op::CommShrink: return "ncclCommShrink";
    case Op::CommFinalize: return "ncclCommFinalize";
    case Op::CommDestroy: return "ncclCommDestroy";
    case Op::CommAbort: return "ncclCommAbort";
    case Op::WindowRegister: return "ncclCommWindowRegister";
    case Op::WindowDeregister: return "ncclCommWindowDeregister";
    case Op::CommRevoke: return "ncclCommRevoke";
  }
  return "?";
}

}  // namespace hangshim::ledger
