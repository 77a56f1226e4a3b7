// Reading what the user named: directories of ledgers (HANGSHIM_DIR of each node), single
// ledger files, exports (`hangshim export` of other nodes) and PyTorch Flight Recorder dumps
// (one file per rank, found by their contents), in any mix. A file that cannot be
// used becomes one InputError and the rest is read on.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report/inputs/inputs.h"
#include "report/inputs/jobs.h"
#include "report/inputs/library_frames.h"

namespace hangshim::report {

struct LoadOptions {
  ViewOptions view;
  LibraryPatterns patterns = LibraryPatterns::from_env(nullptr);
  std::string here;     // this host's name (liveness is judged for its ledgers only)
  uint64_t now_ns = 0;  // the report's clock
  size_t threads = 0;   // threads reading ledgers and exports; 0: one per CPU it may use, at most 8
};

// A directory (its *.ledger and *.json files, and the Flight Recorder dumps among its other
// files), a ledger, an export, or a dump.
void load_path(const std::string& path, Inputs& inputs, const LoadOptions& options);
// Many paths, in order, the way load_path reads each; consecutive export files and consecutive
// ledger files (what a shell's `exports/*.json` names) are read together as a directory's are,
// on every thread.
void load_paths(const std::vector<std::string>& paths, Inputs& inputs, const LoadOptions& options);
void load_ledger_file(const std::string& path, Inputs& inputs, const LoadOptions& options);
// Many ledgers, in order, read on `options.threads` threads (read_in_parallel.h): the inputs come
// out the same as from reading them one by one.
void load_ledger_files(const std::vector<std::string>& paths, Inputs& inputs, const LoadOptions& options);
// In export_read.cpp; the second reads many exports, in order.
void load_export_file(const std::string& path, Inputs& inputs, const LoadOptions& options);
void load_export_files(const std::vector<std::string>& paths, Inputs& inputs, const LoadOptions& options);
// A PyTorch Flight Recorder dump (flight_recorder/fr_load.cpp): one rank, its rank from the file
// name. looks_like_pickle: the file starts as a pickle does (what it holds is read later).
void load_flight_recorder_file(const std::string& path, Inputs& inputs, const LoadOptions& options);
bool looks_like_pickle(const std::string& path);

// The order a directory's files are read in: names as people count them (runs of digits by
// value: hangshim-r9-... before hangshim-r10-..., node9.json before node10.json), which is the
// order of their ranks, the order the report keeps.
bool natural_less(const std::string& a, const std::string& b);

// After everything is loaded: the selected job's ledgers only (jobs.h; the others are listed in
// other_jobs), one ledger per rank (the newest, when a directory still holds an earlier run's),
// ledgers without a rank set aside; each with a warning. A selection that matches no job is an
// error in `inputs.errors`, and no rank is left.
void settle_inputs(Inputs& inputs, const JobSelection& selection = {}, const std::string& here = "");

}  // namespace hangshim::report
