#include "report/inputs/flight_recorder/fr_names.h"

#include <charconv>
#include <limits>

#include <fmt/format.h>

namespace hangshim::report::flight_recorder {

using ledger::Op;

namespace {

struct NameOp {
  std::string_view name;
  Op op;
  bool barrier;
};

// The collectives' profiling names: ProcessGroupNCCL's, and the analyser's COLLECTIVES set.
constexpr NameOp kCollectives[] = {
    {"all_reduce", Op::AllReduce, false},
    {"allreduce_coalesced", Op::AllReduce, false},
    {"all_reduce_coalesced", Op::AllReduce, false},
    {"all_reduce_barrier", Op::AllReduce, true},
    {"barrier", Op::AllReduce, true},
    {"broadcast", Op::Broadcast, false},
    {"_broadcast_oop", Op::Broadcast, false},
    {"reduce", Op::Reduce, false},
    {"_reduce_oop", Op::Reduce, false},
    {"all_gather", Op::AllGather, false},
    {"all_gather_single", Op::AllGather, false},
    {"all_gather_v", Op::AllGather, false},
    {"_all_gather_base", Op::AllGather, false},
    {"_allgather_base", Op::AllGather, false},
    {"all_gather_into_tensor_coalesced", Op::AllGather, false},
    {"ALLGATHER_coalesced", Op::AllGather, false},
    {"reduce_scatter", Op::ReduceScatter, false},
    {"reduce_scatter_single", Op::ReduceScatter, false},
    {"reduce_scatter_v", Op::ReduceScatter, false},
    {"_reduce_scatter_base", Op::ReduceScatter, false},
    {"reduce_scatter_tensor_coalesced", Op::ReduceScatter, false},
    {"REDUCE_SCATTER_coalesced", Op::ReduceScatter, false},
    {"all_to_all", Op::AlltoAll, false},
    {"all_to_all_single", Op::AlltoAll, false},
    {"all_to_all_v_single", Op::AlltoAll, false},
    {"alltoall_base", Op::AlltoAll, false},
    {"gather", Op::Gather, false},
    {"scatter", Op::Scatter, false},
    {"new_window", Op::WindowRegister, false},
};

bool parse_rank(std::string_view text, int32_t& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && out >= 0 && out < ledger::kMaxRanks;
}

uint64_t times(uint64_t a, int32_t n) {
  uint64_t b = n > 0 ? static_cast<uint64_t>(n) : 1;
  return a > std::numeric_limits<uint64_t>::max() / b ? std::numeric_limits<uint64_t>::max() : a * b;
}

}  // namespace

std::optional<ProfilingName> parse_profiling_name(std::string_view name) {
  size_t colon = name.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string_view rest = name.substr(colon + 1);
  size_t space = rest.find(' ');
  std::string_view type = rest.substr(0, space);
  std::string_view meta = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
  ProfilingName out;
  if (type == "coalesced") {
    out.coalesced_end = true;
    return out;
  }
  if (type == "send" || type == "recv") {
    // "send 0->1": from 0 to 1; "recv 1<-0": 1 from 0. Ranks in the group.
    std::string_view arrow = type == "send" ? "->" : "<-";
    size_t at = meta.find(arrow);
    if (at == std::string_view::npos || !parse_rank(meta.substr(0, at), out.self) ||
        !parse_rank(meta.substr(at + 2), out.peer)) {
      return std::nullopt;
    }
    out.op = type == "send" ? Op::Send : Op::Recv;
    return out;
  }
  for (const auto& c : kCollectives) {
    if (c.name == type) {
      out.op = c.op;
      out.barrier = c.barrier;
      return out;
    }
  }
  return std::nullopt;
}

std::string profiling_name(Op op, uint16_t record_flags, int32_t comm_rank, int32_t peer) {
  switch (op) {
    case Op::AllReduce: return (record_flags & ledger::kRecordBarrier) != 0 ? "nccl:all_reduce_barrier" : "nccl:all_reduce";
    case Op::Broadcast: return "nccl:broadcast";
    case Op::Reduce: return "nccl:reduce";
    case Op::AllGather: return "nccl:all_gather";
    case Op::ReduceScatter: return "nccl:reduce_scatter";
    case Op::AlltoAll: return "nccl:all_to_all";
    case Op::Gather: return "nccl:gather";
    case Op::Scatter: return "nccl:scatter";
    case Op::Send: return fmt::format("nccl:send {}->{}", comm_rank, peer);
    case Op::Recv: return fmt::format("nccl:recv {}<-{}", comm_rank, peer);
    case Op::WindowRegister: return "nccl:new_window";
    default: return "";
  }
}

uint8_t nccl_dtype(std::string_view c10_name) {
  struct Pair {
    std::string_view name;
    uint8_t dtype;
  };
  // ncclInt8 0, ncclUint8 1, ncclInt32 2, ncclUint32 3, ncclInt64 4, ncclUint64 5, ncclFloat16 6,
  // ncclFloat32 7, ncclFloat64 8, ncclBfloat16 9, ncclFloat8e4m3 10, ncclFloat8e5m2 11.
  static constexpr Pair kPairs[] = {{"Char", 0},  {"Byte", 1},     {"Bool", 1},      {"Int", 2},
                                    {"UInt32", 3}, {"Long", 4},    {"UInt64", 5},    {"Half", 6},
                                    {"Float", 7}, {"Double", 8},   {"BFloat16", 9},  {"Float8_e4m3fn", 10},
                                    {"Float8_e5m2", 11}};
  for (const auto& p : kPairs) {
    if (p.name == c10_name) return p.dtype;
  }
  return 255;
}

const char* c10_dtype(uint8_t dtype) {
  static const char* const kNames[] = {"Char",  "Byte",  "Int",    "UInt32",   "Long",          "UInt64",
                                       "Half",  "Float", "Double", "BFloat16", "Float8_e4m3fn", "Float8_e5m2"};
  return dtype < sizeof(kNames) / sizeof(kNames[0]) ? kNames[dtype] : "";
}

uint64_t nccl_count(Op op, uint64_t input_elements, uint64_t output_elements, int32_t nranks) {
  switch (op) {
    case Op::AllGather: return input_elements;
    case Op::ReduceScatter:
    case Op::Scatter: return output_elements;
    case Op::AlltoAll: return nranks > 0 ? input_elements / static_cast<uint64_t>(nranks) : input_elements;
    default: return input_elements != 0 ? input_elements : output_elements;
  }
}

TensorElements tensor_elements(Op op, uint64_t count, int32_t nranks) {
  switch (op) {
    case Op::AllGather:
    case Op::Gather: return {count, times(count, nranks)};
    case Op::ReduceScatter:
    case Op::Scatter: return {times(count, nranks), count};
    case Op::AlltoAll: return {times(count, nranks), times(count, nranks)};
    default: return {count, count};
  }
}

}  // namespace hangshim::report::flight_recorder
