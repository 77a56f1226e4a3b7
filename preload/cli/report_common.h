// What `hangshim report`, `export` and `watch` share: the default ledger directory, rank lists
// ("0-2,4,7"), seconds, and reading + diagnosing a set of paths.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "report/analysis/analysis.h"
#include "report/inputs/inputs.h"
#include "report/inputs/jobs.h"
#include "report/analysis/model.h"

namespace hangshim::cli {

// $HANGSHIM_DIR, else /dev/shm/hangshim-$UID (as the shim picks it).
std::string default_ledger_dir();

bool parse_rank_list(std::string_view text, std::vector<int>& out);
bool parse_seconds(std::string_view text, double& out);
bool parse_count(std::string_view text, size_t& out);

struct ReportSettings {
  std::vector<std::string> paths;        // empty: the default directory
  std::vector<std::string> libraries;    // --library patterns, added to HANGSHIM_LIBRARY_PATHS'
  bool stacks = true;                    // read live stacks of the ranks running here
  bool locals = false;                   // ... with each frame's variables (--html shows them)
  size_t history = 16;                   // newest calls kept per ledger (see ViewOptions)
  report::DiagnoseOptions diagnose;
  report::JobSelection job;              // --job / --pid: which job of the ledgers read
};

// Reads every path (errors are collected, not fatal), attaches live stacks, diagnoses.
// The paths to read: the ones given, else the default ledger directory.
std::vector<std::string> ledger_paths(const ReportSettings& settings);

report::Diagnosis run_report(const ReportSettings& settings, report::Inputs* keep_inputs = nullptr);

// "hangshim: <message>" on stderr for each unusable input.
void print_input_errors(const report::Diagnosis& d);

}  // namespace hangshim::cli
