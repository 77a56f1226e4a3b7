// `hangshim report` from what the user named to the diagnosis, the one entry point the hangshim
// command calls (report, watch): every stage in order, each in its own folder:
//
//   load (inputs/load_inputs.h: directories of ledgers, ledgers, exports, Flight Recorder dumps)
//   -> settle (one job, one ledger per rank)
//   -> live stacks of the ranks running here (inputs/live_stacks.h)
//   -> diagnosis (diagnose.h: the analysis/ classifiers and the verdict)
//   -> where each straggler running here spends its time (inputs/busy_line.h).
//
// What comes out is a Diagnosis; wording/ renders it, outputs/ writes exports. The caller turns
// its command line and environment into a ReportRequest; nothing here reads either.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "report/analysis/analysis.h"
#include "report/analysis/model.h"
#include "report/inputs/inputs.h"
#include "report/inputs/jobs.h"

namespace hangshim::report {

struct ReportRequest {
  std::vector<std::string> paths;  // what to read (the command puts its default directory here)
  bool stacks = true;              // read live stacks of the ranks running here
  bool locals = false;             // ... with each frame's variables (--html shows them)
  size_t history = 16;             // newest calls kept per ledger (see ViewOptions)
  size_t threads = 0;              // threads reading ledgers and exports and analysing them (0: one per CPU, at most 8)
  DiagnoseOptions diagnose;        // its `patterns` (library frames) serve loading and sampling too
  JobSelection job;                // --job / --pid: which job of the ledgers read
};

// Reads every path (errors are collected in the diagnosis, not fatal), attaches live stacks,
// diagnoses, samples the stragglers. `keep_inputs`: where to leave what was read.
Diagnosis run_report(const ReportRequest& request, Inputs* keep_inputs = nullptr);

}  // namespace hangshim::report
