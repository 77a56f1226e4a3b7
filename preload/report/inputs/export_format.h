// `hangshim export`: one node's ledgers, and the live Python stacks of its ranks, as one JSON
// file that `hangshim report` on any machine reads like the directory it came from.
//
//   {"format": "hangshim-export", "version": 1, "host": "node7", "time_ns": ...,
//    "hangshim_version": "0.1.0", "directories": [...],
//    "ledgers": [{"source": PATH, "size": BYTES, "liveness": "alive"|"gone"|"recycled"|"unknown",
//                 "pages": [[OFFSET, BASE64], ...],   // the file's non-zero 4 KiB pages
//                 "stacks": {pyframes process JSON} | "stack_error": TEXT}, ...],
//    "errors": [{"source": PATH, "message": TEXT}, ...]}
//
// Ledgers travel as their own bytes: the reader on the other side validates them exactly as it
// validates a file (same untrusted parser, same format version check).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report/inputs/inputs.h"

namespace hangshim::report {

inline constexpr const char* kExportFormat = "hangshim-export";
inline constexpr uint64_t kExportVersion = 1;
inline constexpr size_t kExportPage = 4096;

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
