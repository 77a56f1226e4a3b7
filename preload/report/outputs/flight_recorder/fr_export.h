// `hangshim export --format flight-recorder`: the ledgers read (settled to one job, every record
// kept) as PyTorch Flight Recorder dumps, one per rank, in the schema PyTorch 2.10 writes
// (FlightRecorderDetail.hpp; inputs/flight_recorder/fr_dump.h shows it) and pickled as the
// TorchScript pickler pickles it, so PyTorch's analyser (torchfrtrace, tools/flight_recorder)
// and anything else that reads dumps read them, and `hangshim report DIR` reads them back.
//
// What the ledger knows and a dump has no field for (pids, hosts, heartbeats, exits, errors,
// roots, reduce ops) is left out; what a dump needs and the ledger does not know is said
// plainly: the tensor sizes are one 1-D tensor per side with NCCL's element count, states are
// "scheduled" or "completed" (never "started": the ledger cannot tell), record_id is the
// ledger's record number (it counts communicator set-up calls too).
#pragma once

#include <string>
#include <vector>

#include "report/analysis/analysis.h"
#include "report/inputs/inputs.h"

namespace hangshim::report::flight_recorder {

// PyTorch's default file prefix (TORCH_NCCL_DEBUG_INFO_TEMP_FILE is /tmp/nccl_trace_rank_).
inline constexpr const char* kDumpPrefix = "nccl_trace_rank_";
// The dump version written: the newest whose fields are known (PyTorch 2.10).
inline constexpr const char* kDumpVersion = "2.10";

struct DumpFile {
  int rank = -1;
  std::string name;   // kDumpPrefix + rank
  std::string bytes;  // the pickle
};

struct DumpSet {
  std::vector<DumpFile> files;        // by rank
  std::vector<std::string> warnings;  // what the dumps could not say as the ledgers do
};

// One dump per rank of `inputs` (read with every record kept, settled to one job).
DumpSet build_dumps(const Inputs& inputs, const DiagnoseOptions& options = {});

}  // namespace hangshim::report::flight_recorder
