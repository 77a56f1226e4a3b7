// hangshim export [DIR ...] [-o FILE]: this node's ledgers and live stacks as one JSON file,
// for `hangshim report` on another machine (the multi-node collectors run it on every node);
// with --format flight-recorder, one PyTorch Flight Recorder dump per rank instead.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/file_output.h"
#include "cli/report_common.h"
#include "cli/subcommands.h"
#include "report/analysis/rank_ranges.h"
#include "report/outputs/export_write.h"
#include "report/outputs/flight_recorder/fr_export.h"
#include "report/inputs/load_inputs.h"
#include "report/inputs/liveness.h"

namespace hangshim::cli {

namespace {

constexpr const char* kUsage =
    "usage: hangshim export [PATH ...] [-o FILE] [--no-stacks]\n"
    "       hangshim export --format flight-recorder [PATH ...] [-o DIR]\n"
    "\n"
    "Writes this node's ledgers (default: $HANGSHIM_DIR, else /dev/shm/hangshim-$UID) and the\n"
    "live Python stacks of the ranks that still run here as one JSON file, to stdout or FILE.\n"
    "`hangshim report` reads any mix of exports and ledger directories:\n"
    "    hangshim export -o /shared/hang/$(hostname).json      # on every node\n"
    "    hangshim report /shared/hang                          # anywhere\n"
    "scripts/hang-dump-slurm and scripts/hang-dump-pdsh do both for a whole job.\n"
    "\n"
    "With --format flight-recorder it writes one PyTorch Flight Recorder dump per rank instead\n"
    "(DIR/nccl_trace_rank_<rank>, the pickle PyTorch writes, version 2.10), from the ledgers,\n"
    "exports and dumps PATH names (as `hangshim report` reads them), for PyTorch's own analyser:\n"
    "    hangshim export --format flight-recorder -o /shared/fr  # on every node: one file per rank\n"
    "    torchfrtrace /shared/fr --prefix nccl_trace_rank_\n"
    "\n"
    "  -o, --output FILE  write FILE (created 0600; replaced atomically) instead of stdout;\n"
    "                     with --format flight-recorder, the directory DIR (created 0700 when\n"
    "                     missing; default ./flight-recorder)\n"
    "  --format FORMAT    json (the default) or flight-recorder\n"
    "  --no-stacks        do not read live stacks (json; dumps hold none)\n"
    "\n"
    "Exit status: 0 written (unusable ledgers are listed inside and on stderr); 1 FILE could not be\n"
    "written, or no dump written (no usable ledger); 2 usage.\n";

// --format flight-recorder: one dump per rank of the job the ledgers hold (the one `hangshim
// report` would diagnose), every call each ledger kept.
int export_flight_recorder(const std::vector<std::string>& paths, std::string dir) {
  report::LoadOptions load;
  load.view.max_records = SIZE_MAX;
  load.view.history = 0;
  load.patterns = report::LibraryPatterns::from_env(std::getenv("HANGSHIM_LIBRARY_PATHS"));
  load.here = report::this_host();
  load.now_ns = report::realtime_now_ns();
  report::Inputs inputs;
  inputs.now_ns = load.now_ns;
  report::load_paths(paths, inputs, load);
  report::settle_inputs(inputs, {}, load.here);
  for (const auto& e : inputs.errors) fmt::print(stderr, "hangshim: {}\n", e.message);
  if (inputs.ranks.empty()) {
    fmt::print(stderr, "hangshim: no usable ledger in {}: no dump written (name the ledger directories, or run the job "
                       "with `hangshim run`)\n", fmt::join(paths, " "));
    return 1;
  }
  if (!inputs.other_jobs.empty()) {
    std::vector<std::string> keys;
    for (const auto& j : inputs.other_jobs) keys.push_back(j.key);
    fmt::print(stderr, "hangshim: note: only {} is written; the ledgers also hold {} (hangshim report --job KEY "
                       "diagnoses them)\n", inputs.job.name, fmt::join(keys, ", "));
  }
  report::flight_recorder::DumpSet dumps = report::flight_recorder::build_dumps(inputs);
  for (const auto& w : dumps.warnings) fmt::print(stderr, "hangshim: note: {}\n", w);
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    fmt::print(stderr, "hangshim: cannot create {}: {} (pick a writable directory with -o)\n", dir, std::strerror(errno));
    return 1;
  }
  std::vector<int> ranks;
  for (const auto& f : dumps.files) {
    if (!write_file_atomically(dir + "/" + f.name, f.bytes, "-o")) return 1;
    ranks.push_back(f.rank);
  }
  // Dumps of other ranks already there (an earlier export, another node's) are read with these:
  // said, never removed.
  if (DIR* d = ::opendir(dir.c_str())) {
    std::vector<std::string> others;
    while (dirent* entry = ::readdir(d)) {
      std::string name = entry->d_name;
      if (name.rfind(report::flight_recorder::kDumpPrefix, 0) != 0) continue;
      bool ours = std::any_of(dumps.files.begin(), dumps.files.end(), [&](const auto& f) { return f.name == name; });
      if (!ours) others.push_back(name);
    }
    ::closedir(d);
    if (!others.empty()) {
      std::sort(others.begin(), others.end());
      fmt::print(stderr, "hangshim: note: {} also holds {} (not written now: another node's, or an earlier export)\n", dir,
                 fmt::join(others, " "));
    }
  }
  fmt::print(stderr, "hangshim: wrote {} Flight Recorder dump(s) (version {}, {} {}) of {} to {}/ "
                     "(torchfrtrace {} --prefix {}; hangshim report {})\n",
             dumps.files.size(), report::flight_recorder::kDumpVersion, ranks.size() == 1 ? "rank" : "ranks",
             report::format_ranks(ranks), inputs.job.name, dir, dir, report::flight_recorder::kDumpPrefix, dir);
  return 0;
}

}  // namespace

int cmd_export(std::span<char*> args) {
  report::ExportOptions options;
  std::string output;
  std::string format = "json";
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--help" || arg == "-h") {
      fmt::print("{}", kUsage);
      return 0;
    } else if (arg == "--no-stacks") {
      options.stacks = false;
    } else if (arg == "--format") {
      if (i + 1 >= args.size() || (std::string_view(args[i + 1]) != "json" && std::string_view(args[i + 1]) != "flight-recorder")) {
        fmt::print(stderr, "hangshim: --format needs json or flight-recorder (see hangshim export --help)\n");
        return 2;
      }
      format = args[++i];
    } else if (arg == "-o" || arg == "--output") {
      if (i + 1 >= args.size() || *args[i + 1] == '\0') {
        fmt::print(stderr, "hangshim: {} needs a file name (see hangshim export --help)\n", arg);
        return 2;
      }
      output = args[++i];
    } else if (!arg.empty() && arg[0] == '-') {
      fmt::print(stderr, "hangshim: unknown option {} (see hangshim export --help)\n", arg);
      return 2;
    } else {
      std::string dir(arg);
      while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
      options.dirs.push_back(dir);
    }
  }
  if (options.dirs.empty()) options.dirs.push_back(default_ledger_dir());
  if (format == "flight-recorder") return export_flight_recorder(options.dirs, output.empty() ? "flight-recorder" : output);
  options.here = report::this_host();
  options.now_ns = report::realtime_now_ns();
  report::ExportOutcome out = report::build_export(options);
  for (const auto& e : out.errors) fmt::print(stderr, "hangshim: {}\n", e.message);
  if (out.ledgers == 0) {
    fmt::print(stderr, "hangshim: no usable ledger on {} in {} (the export says so; the report will show it)\n",
               options.here, fmt::join(options.dirs, " "));
  }
  if (output.empty()) {
    fmt::print("{}", out.json);
    std::fflush(stdout);
    return 0;
  }
  if (!write_file_atomically(output, out.json, "-o")) return 1;
  fmt::print(stderr, "hangshim: exported {} ledger(s) and {} live stack(s) from {} to {}\n", out.ledgers, out.stacks,
             options.here, output);
  return 0;
}

}  // namespace hangshim::cli
