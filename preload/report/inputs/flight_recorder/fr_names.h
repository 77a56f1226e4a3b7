// How Flight Recorder names what the ledger records: the operation ("nccl:all_reduce",
// "nccl:send 0->1", from ProcessGroupNCCL's profiling names and the analyser's list in
// torch/distributed/flight_recorder/components/types.py), the dtype (c10's ScalarType names,
// "Float"), and the tensor sizes it stores instead of NCCL's element count. Both directions:
// reading a dump into ledger terms, and writing ledger calls as a dump.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ledger/format.h"

namespace hangshim::report::flight_recorder {

struct ProfilingName {
  ledger::Op op = ledger::Op::None;
  bool barrier = false;        // "all_reduce_barrier" / "barrier": the one-element all_reduce of a barrier
  bool coalesced_end = false;  // "coalesced": closes a group of calls that share its sequence number
  int32_t self = -1;           // send/recv: this rank and its peer in the group ("send 0->1", "recv 1<-0")
  int32_t peer = -1;
};

// "nccl:all_reduce" (any backend prefix: "xccl:", ...); nullopt for an operation the ledger has
// no name for (a "split", a backend's own op).
std::optional<ProfilingName> parse_profiling_name(std::string_view name);

// The profiling name PyTorch gives the call, "" for a call Flight Recorder does not record
// (communicator init, finalize, ...). `comm_rank` and `peer` are ranks in the communicator.
std::string profiling_name(ledger::Op op, uint16_t record_flags, int32_t comm_rank, int32_t peer);

// c10::toString(ScalarType) <-> ncclDataType_t, as ProcessGroupNCCL maps them (bool travels as
// uint8). 255 / "" where there is no counterpart.
uint8_t nccl_dtype(std::string_view c10_name);
const char* c10_dtype(uint8_t nccl_dtype);

// NCCL's element count of a call from the elements of its input and output tensors (the side
// NCCL counts: all_gather's send side, reduce_scatter's receive side, all_to_all's per peer),
// and back: the elements of one input and one output tensor that make that count.
uint64_t nccl_count(ledger::Op op, uint64_t input_elements, uint64_t output_elements, int32_t nranks);
struct TensorElements {
  uint64_t input = 0;
  uint64_t output = 0;
};
TensorElements tensor_elements(ledger::Op op, uint64_t count, int32_t nranks);

}  // namespace hangshim::report::flight_recorder
