// `hangshim export`: this node's ledgers and the live stacks of its ranks as one JSON document
// (the format: inputs/export_format.h), which `hangshim report` on any machine reads like the
// directories it came from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report/inputs/export_format.h"
#include "report/inputs/inputs.h"

namespace hangshim::report {

struct ExportOptions {
  std::vector<std::string> dirs;  // HANGSHIM_DIR by default
  bool stacks = true;             // read the live stacks of ranks that run here
  std::string here;               // this host
  uint64_t now_ns = 0;
};

struct ExportOutcome {
  std::string json;
  size_t ledgers = 0;
  size_t stacks = 0;
  std::vector<InputError> errors;  // also inside the document, for the report to show
};

ExportOutcome build_export(const ExportOptions& options);

}  // namespace hangshim::report
