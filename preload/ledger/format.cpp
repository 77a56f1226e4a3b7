#include "ledger/format.h"

#include <fmt/format.h>

namespace hangshim::ledger {

namespace {

// Each op's name in ledgers and reports, and the NCCL function it records, indexed by Op: one
// table, so a new op cannot get one name and miss the other.
struct OpNames {
  const char* name;
  const char* nccl_function;
};
constexpr OpNames kOpNames[] = {
    {"none", "?"},
    {"all_reduce", "ncclAllReduce"},
    {"broadcast", "ncclBroadcast"},
    {"reduce", "ncclReduce"},
    {"all_gather", "ncclAllGather"},
    {"reduce_scatter", "ncclReduceScatter"},
    {"all_to_all", "ncclAlltoAll"},
    {"gather", "ncclGather"},
    {"scatter", "ncclScatter"},
    {"send", "ncclSend"},
    {"recv", "ncclRecv"},
    {"comm_init_rank", "ncclCommInitRank"},
    {"comm_init_all", "ncclCommInitAll"},
    {"comm_init_rank_scalable", "ncclCommInitRankScalable"},
    {"comm_split", "ncclCommSplit"},
    {"comm_shrink", "ncclCommShrink"},
    {"comm_finalize", "ncclCommFinalize"},
    {"comm_destroy", "ncclCommDestroy"},
    {"comm_abort", "ncclCommAbort"},
    {"window_register", "ncclCommWindowRegister"},
    {"window_deregister", "ncclCommWindowDeregister"},
    {"comm_revoke", "ncclCommRevoke"},
};
static_assert(sizeof(kOpNames) / sizeof(kOpNames[0]) == kOpCount, "one entry per Op, in Op's order");
static_assert(static_cast<int>(Op::CommRevoke) == kOpCount - 1, "the last Op is the table's last entry");

}  // namespace

const char* op_name(uint8_t op) noexcept { return op < kOpCount ? kOpNames[op].name : "unknown"; }

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

const char* nccl_function_name(uint8_t op) noexcept { return op < kOpCount ? kOpNames[op].nccl_function : "?"; }

const char* nccl_function_name(uint8_t op, uint32_t record_flags) noexcept {
  if (op == static_cast<uint8_t>(Op::Broadcast) && (record_flags & kRecordBcastForm) != 0) return "ncclBcast";
  return nccl_function_name(op);
}

}  // namespace hangshim::ledger
