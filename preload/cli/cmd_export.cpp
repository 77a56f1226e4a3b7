// hangshim export [DIR ...] [-o FILE]: this node's ledgers and live stacks as one JSON file,
// for `hangshim report` on another machine (the multi-node collectors run it on every node).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/file_output.h"
#include "cli/report_common.h"
#include "cli/subcommands.h"
#include "report/inputs/export_format.h"
#include "report/inputs/liveness.h"

namespace hangshim::cli {

namespace {

constexpr const char* kUsage =
    "usage: hangshim export [DIR ...] [-o FILE] [--no-stacks]\n"
    "\n"
    "Writes this node's ledgers (default: $HANGSHIM_DIR, else /dev/shm/hangshim-$UID) and the\n"
    "live Python stacks of the ranks that still run here as one JSON file, to stdout or FILE.\n"
    "`hangshim report` reads any mix of exports and ledger directories:\n"
    "    hangshim export -o /shared/hang/$(hostname).json      # on every node\n"
    "    hangshim report /shared/hang                          # anywhere\n"
    "scripts/hang-dump-slurm and scripts/hang-dump-pdsh do both for a whole job.\n"
    "\n"
    "  -o, --output FILE  write FILE (created 0600; replaced atomically) instead of stdout\n"
    "  --no-stacks        do not read live stacks\n"
    "\n"
    "Exit status: 0 written (unusable ledgers are listed inside and on stderr); 1 FILE could not be\n"
    "written; 2 usage.\n";

}  // namespace

int cmd_export(std::span<char*> args) {
  report::ExportOptions options;
  std::string output;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--help" || arg == "-h") {
      fmt::print("{}", kUsage);
      return 0;
    } else if (arg == "--no-stacks") {
      options.stacks = false;
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
