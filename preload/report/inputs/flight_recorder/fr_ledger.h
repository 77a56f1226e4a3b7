// A Flight Recorder dump in the ledger's terms, so the report analyses it as it analyses a
// ledger: each process group this rank belongs to becomes a communicator (its key made from the
// group's name and ranks, equal on every rank's dump), each entry a call (op and sequence number
// from profiling_name and collective_seq_id / p2p_seq_id, NCCL's element count from the tensor
// sizes, completed or pending from its state, the call-site from its frames).
//
// What a dump does not hold stays unknown: no pid, host or heartbeat (the process is judged
// nowhere, never dead), no roots or reduce ops, no errors. Iterations count within the dump's
// window (its newest TORCH_NCCL_TRACE_BUFFER_SIZE entries).
#pragma once

#include <string>

#include "ledger/reader.h"
#include "report/inputs/flight_recorder/fr_dump.h"

namespace hangshim::report::flight_recorder {

struct DumpOrigin {
  std::string source;    // the file, as messages name it
  std::string job;       // what groups dumps into a job: "dumps:<directory>"
  int rank = -1;         // the global rank (from the file name: <prefix><rank>)
  uint64_t time_ns = 0;  // when it was written (the file's mtime): how long calls were pending
};

ledger::Ledger dump_to_ledger(const Dump& dump, const DumpOrigin& origin);

// The global rank a dump's file name ends in (PyTorch names them <prefix><rank>, the prefix from
// TORCH_NCCL_DEBUG_INFO_TEMP_FILE: /tmp/nccl_trace_rank_0), -1 when it ends in no number.
int rank_from_file_name(std::string_view path);

}  // namespace hangshim::report::flight_recorder
