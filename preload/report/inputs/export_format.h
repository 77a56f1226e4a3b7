// The export's format, for both sides (outputs/export_write.h writes it, export_read.cpp reads
// it). `hangshim export`: one node's ledgers, and the live Python stacks of its ranks, as one JSON
// file that `hangshim report` on any machine reads like the directory it came from.
//
//   {"format": "hangshim-export", "version": 1, "host": "node7", "time_ns": ...,
//    "hangshim_version": "0.1.0", "directories": [...],
//    "ledgers": [{"source": PATH, "size": BYTES, "liveness": "alive"|"gone"|"recycled"|"unknown",
//                 "pages": [[OFFSET, BASE64], ...],   // the file's bytes, less runs of zeros
//                 "stacks": {pyframes process JSON} | "stack_error": TEXT}, ...],
//    "errors": [{"source": PATH, "message": TEXT}, ...]}
//
// Ledgers travel as their own bytes: the reader on the other side validates them exactly as it
// validates a file (same untrusted parser, same format version check).
#pragma once

#include <cstddef>
#include <cstdint>

namespace hangshim::report {

inline constexpr const char* kExportFormat = "hangshim-export";
inline constexpr uint64_t kExportVersion = 1;

}  // namespace hangshim::report
