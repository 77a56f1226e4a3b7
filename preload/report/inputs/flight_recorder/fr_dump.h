// A PyTorch Flight Recorder dump as its fields (versions 2.x; the keys are
// torch/csrc/distributed/c10d/FlightRecorder.hpp's constants, filled by getCollectiveTrace,
// getPgConfig and getPgStatus in FlightRecorderDetail.hpp):
//
//   {"version": "2.10", "comm_lib_version": "2.21.5",
//    "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1]"}, ...},
//    "pg_status": {"0": {"last_enqueued_collective": 2, "last_started_collective": -1,
//                        "last_completed_collective": 2}, ...},          (keyed by pg_id)
//    "entries": [{"record_id": 0, "pg_id": 0, "process_group": ("0", "default_pg"),
//                 "collective_seq_id": 1, "p2p_seq_id": 0, "op_id": 1,
//                 "profiling_name": "nccl:all_reduce", "time_created_ns": ...,
//                 "input_sizes": [[3, 4]], "input_dtypes": ["Float"], "output_sizes": [[3, 4]],
//                 "output_dtypes": ["Float"], "state": "scheduled"|"started"|"completed",
//                 "time_discovered_started_ns": None|int, "time_discovered_completed_ns": None|int,
//                 "retired": bool, "timeout_ms": int, "is_p2p": bool, "duration_ms": float,
//                 "thread_id": str, "thread_name": str,
//                 "frames": [{"name": ..., "filename": ..., "line": ...}, ...]}, ...]}
//
// A dump that is not a dict, has no "version" and "entries", is of another major version, or
// lacks "pg_config" is an error; an entry that lacks what the report needs is skipped with a
// warning. The walk over the values is bounded (frames per entry, tensors per call, work over
// values the memo shares), so a hostile dump cannot make it slow.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pyframes/result.h"
#include "report/inputs/flight_recorder/fr_names.h"
#include "report/inputs/flight_recorder/pickle_document.h"

namespace hangshim::report::flight_recorder {

// Frames kept per entry, innermost first (the ledger's deepest call-site).
inline constexpr size_t kMaxFrames = ledger::kMaxCallsiteDepth;

struct Frame {
  std::string function;  // "name"
  std::string file;      // "filename"
  int32_t line = 0;
};

enum class EntryState { Scheduled, Started, Completed };

struct Entry {
  size_t index = 0;             // its place in "entries"
  int64_t record_id = -1;
  int64_t pg_id = -1;
  std::string pg_name;          // process_group[0]: the key of pg_config
  ProfilingName op;
  std::string profiling_name;
  uint64_t collective_seq_id = 0;
  uint64_t p2p_seq_id = 0;
  bool is_p2p = false;
  uint64_t time_created_ns = 0;
  uint64_t input_elements = 0;   // summed over the input tensors (saturating)
  uint64_t output_elements = 0;
  std::string dtype;             // the first input's ("Float"), else the first output's
  EntryState state = EntryState::Scheduled;
  uint64_t time_discovered_completed_ns = 0;  // 0: None
  bool retired = false;
  std::vector<Frame> frames;     // innermost first, at most kMaxFrames
  bool frames_cut = false;       // the entry had more
};

struct ProcessGroup {
  std::string name;  // "0", the pg_config key
  std::string desc;  // "default_pg", "undefined", a user's group_desc
  std::vector<int32_t> ranks;  // global ranks, in the group's rank order
};

struct GroupStatus {
  int64_t last_enqueued = -1;
  int64_t last_started = -1;
  int64_t last_completed = -1;
};

struct Dump {
  std::string version;  // "2.10"
  int major = 0;
  int minor = 0;
  std::string comm_lib_version;
  std::vector<ProcessGroup> groups;         // pg_config, in its order
  std::map<int64_t, GroupStatus> status;    // pg_status by pg_id
  std::vector<Entry> entries;               // usable entries, in the dump's order
  std::vector<std::string> warnings;        // entries skipped and why
};

// The dump a parsed pickle of `source_bytes` bytes holds. Errors name what is missing or wrong
// ("a pickle of a list, not a Flight Recorder dump (a dict with \"version\" and \"entries\", ...)").
pyframes::Result<Dump> read_dump(const pickle::Document& doc, size_t source_bytes);

}  // namespace hangshim::report::flight_recorder
