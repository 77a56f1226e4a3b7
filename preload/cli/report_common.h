// What `hangshim report`, `export` and `watch` share: the default ledger directory, rank lists
// ("0-2,4,7"), seconds, and their command lines and environment as a report request
// (report/pipeline.h runs it).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "report/pipeline.h"

namespace hangshim::cli {

// $HANGSHIM_DIR, else /dev/shm/hangshim-$UID (as the shim picks it).
std::string default_ledger_dir();

bool parse_rank_list(std::string_view text, std::vector<int>& out);
bool parse_seconds(std::string_view text, double& out);
bool parse_count(std::string_view text, size_t& out);

// A report request as the command line gives it: `paths` empty means the default directory,
// and library patterns come from HANGSHIM_LIBRARY_PATHS plus --library.
struct ReportSettings : report::ReportRequest {
  std::vector<std::string> libraries;  // --library patterns, added to HANGSHIM_LIBRARY_PATHS'
};

// The paths to read: the ones given, else the default ledger directory.
std::vector<std::string> ledger_paths(const ReportSettings& settings);

// The request completed from the environment, then report::run_report (report/pipeline.h).
report::Diagnosis run_report(const ReportSettings& settings, report::Inputs* keep_inputs = nullptr);

// "hangshim: <message>" on stderr for each unusable input.
void print_input_errors(const report::Diagnosis& d);

}  // namespace hangshim::cli
