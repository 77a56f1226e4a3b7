// Where a whole-job view gets its processes: PIDs given, the descendants of launchers
// (--children), command-line matches (--pgrep), or saved --json documents (--merge-json).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "command/app.h"
#include "command/options.h"
#include "pyframes/render.h"

namespace pyframes::cli {

// How processes and files are found; live /proc and the file system by default, tests substitute.
struct Sources {
  std::function<Result<std::vector<int64_t>>(int64_t launcher)> children;
  std::function<Result<std::vector<int64_t>>(const std::string& pattern)> matching;
  std::function<Result<std::string>(const std::string& path)> read_file;  // "-" is stdin
};
Sources live_sources();

struct Selection {
  std::vector<Target> targets;  // the targets given first, then the processes found, each once
  std::vector<bool> found;      // per target: found by --children/--pgrep (not Python there is no error)
  int status = kExitOk;
};

// The targets to read; a launcher that does not exist or a bad pattern is one error line.
Selection select_targets(const Options& options, const Sources& sources, Output& output);

// A process found by --children or --pgrep that turns out not to be Python (the launcher's
// shell, a compiler) or to have exited meanwhile is left out without a word.
bool quietly_skipped(const Error& error);

// The processes and errors of saved --json documents (several per file are fine). An unreadable
// or damaged file is one error line and one failure; the others still count.
int load_json_dumps(const std::vector<std::string>& files, const Sources& sources, std::vector<Process>& processes,
                    std::vector<FailedTarget>& failures, Output& output);

}  // namespace pyframes::cli
