#include "report/pipeline.h"

#include <malloc.h>

#include "report/diagnose.h"
#include "report/inputs/busy_line.h"
#include "report/inputs/live_stacks.h"
#include "report/inputs/liveness.h"
#include "report/inputs/load_inputs.h"

namespace hangshim::report {

namespace {

// Where each straggler running here spends the time the others wait for it: 40 samples of its
// live stack over about a second.
void sample_stragglers(const Inputs& inputs, const LibraryPatterns& patterns, Diagnosis& d) {
  for (auto& s : d.stragglers) {
    for (const auto& v : inputs.ranks) {
      if (v.rank != s.rank || v.liveness != Liveness::Alive) continue;
      if (auto busy = sample_busy_line(inputs, v, patterns, 40, 25)) {
        s.spends_at = Site{busy->file, busy->function, busy->line};
        s.spends_samples = busy->hits;
        s.samples = busy->samples;
      }
      break;
    }
  }
}

// Reads the inputs, diagnoses them, and keeps them for the caller when it asks.
Diagnosis diagnose_inputs(const ReportRequest& request, Inputs* keep_inputs) {
  LoadOptions load;
  load.view.max_records = request.history;
  load.threads = request.threads;
  load.patterns = request.diagnose.patterns;
  load.here = this_host();
  load.now_ns = realtime_now_ns();
  Inputs inputs;
  inputs.now_ns = load.now_ns;
  load_paths(request.paths, inputs, load);
  settle_inputs(inputs, request.job, load.here);
  if (request.stacks) attach_live_stacks(inputs, request.locals);
  DiagnoseOptions options = request.diagnose;
  options.threads = request.threads;
  Diagnosis d = diagnose(inputs, options);
  if (request.stacks) sample_stragglers(inputs, request.diagnose.patterns, d);
  if (keep_inputs != nullptr) *keep_inputs = std::move(inputs);
  return d;
}

}  // namespace

Diagnosis run_report(const ReportRequest& request, Inputs* keep_inputs) {
  Diagnosis d = diagnose_inputs(request, keep_inputs);
  // The inputs (a few KiB a rank) are freed by now; their pages go back to the system before a
  // renderer allocates the report (a JSON document of 170 MiB over 131072 ranks), so the peak is
  // the larger of the two, not their sum (1053 -> 859 MiB for that JSON report over 16384 exports).
  // (Kept for the caller, they are not freed: nothing to give back.)
  if (keep_inputs == nullptr) ::malloc_trim(0);
  return d;
}

}  // namespace hangshim::report
