// Calls captured into CUDA graphs (the shim marks them kRecordCaptured): what the ledger can and
// cannot say about them. NCCL saw each once, at the capture; a graph replay launches the captured
// kernels itself, without calling NCCL, so the replays leave no record and the report can judge
// none of them. The communicators' summaries list them, by line, so every renderer says so.
#pragma once

#include <vector>

#include "report/analysis/analysis.h"

namespace hangshim::report {

// Fills CommSummary::captured of `comms` (parallel to a.groups) from the ranks' records.
void find_captured_calls(const Analysis& a, std::vector<CommSummary>& comms);

}  // namespace hangshim::report
