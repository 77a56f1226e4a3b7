// hangshim report [PATH ...]: the diagnosis of a hung job from its ranks' ledgers.
#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "cli/file_output.h"
#include "cli/report_common.h"
#include "cli/subcommands.h"
#include "report/inputs/shim_processes.h"
#include "report/wording/phrases.h"
#include "report/wording/render.h"

namespace hangshim::cli {

namespace {

constexpr const char* kUsage =
    "usage: hangshim report [PATH ...] [--job KEY] [--pid PID] [--json] [--rank LIST] [--comm NAME]\n"
    "                       [--library PATTERN] [--no-stacks] [--heartbeat-timeout S] [--history N]\n"
    "                       [--exit-status] [--html FILE] [--threads N]\n"
    "\n"
    "Reads the ledgers of every rank and says which rank stopped, on which line, in which\n"
    "iteration, and why. The first line is the verdict; detail follows.\n"
    "\n"
    "PATH is any mix of ledger directories, .ledger files and exports (`hangshim export` of\n"
    "other nodes); default: $HANGSHIM_DIR, else /dev/shm/hangshim-$UID. PyTorch Flight Recorder\n"
    "dumps (one file per rank, <prefix><rank>) are read too, alone or with ledgers: named, or\n"
    "found in the directories by their contents. An unusable file is one error line on stderr\n"
    "and the report goes on with the rest. Ranks still running on this host have their Python\n"
    "stacks read (no stop, no ptrace attach).\n"
    "\n"
    "Ledgers of several jobs (a directory keeps them after a job ends) are told apart by the job\n"
    "each was started in (SLURM job, `hangshim run`, torchrun run, launching process) and by the\n"
    "communicators they share. The report is about one job: the newest one with a process still\n"
    "running (else the newest); the others are listed at the end.\n"
    "\n"
    "  --job KEY              the job to report on: a key as listed under \"other jobs\", or a SLURM job id\n"
    "  --pid PID              the job of this process on this host: a rank, its launcher (torchrun), or\n"
    "                         the `hangshim run` that started it (repeatable)\n"
    "  --json                 the diagnosis as JSON\n"
    "  --html FILE            also write the report as one self-contained page: the verdict, a timeline\n"
    "                         of each communicator's newest collectives rank by rank, the merged stack\n"
    "                         tree with each frame's variables, every rank's detail (opens offline)\n"
    "  --rank LIST            detail for these ranks only, e.g. 0-3,7 (the verdict is the whole job's)\n"
    "  --comm NAME            detail for this communicator only: a name (world, world/split1) or a key prefix\n"
    "  --library PATTERN      treat files whose path contains PATTERN as library code (repeatable;\n"
    "                         added to HANGSHIM_LIBRARY_PATHS or torch/, deepspeed/, site-packages/)\n"
    "  --no-stacks            do not read live stacks\n"
    "  --heartbeat-timeout S  a heartbeat older than S seconds means dead or frozen (default 10)\n"
    "  --history N            newest calls kept per ledger, besides pending ones and the newest of each\n"
    "                         call-site (default 16)\n"
    "  --exit-status          exit 3 when a problem is found (default: 0 whenever a report is printed)\n"
    "  --threads N            threads reading and analysing the ledgers and exports (default: one per CPU\n"
    "                         this process may use, at most 8); the report is the same with any number\n"
    "\n"
    "Exit status: 0 report printed; 1 nothing could be read, or the --html FILE could not be written;\n"
    "2 usage; 3 (--exit-status) a problem was found.\n";

int usage_error(const std::string& message) {
  fmt::print(stderr, "hangshim: {} (see hangshim report --help)\n", message);
  return 2;
}

}  // namespace

int cmd_report(std::span<char*> args) {
  ReportSettings settings;
  bool json = false;
  bool exit_status = false;
  std::string html_path;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    auto next = [&]() -> const char* { return i + 1 < args.size() ? args[++i] : nullptr; };
    if (arg == "--help" || arg == "-h") {
      fmt::print("{}", kUsage);
      return 0;
    } else if (arg == "--json") {
      json = true;
    } else if (arg == "--html") {
      const char* v = next();
      if (v == nullptr || *v == '\0') return usage_error("--html needs a file to write, such as hang.html");
      html_path = v;
      settings.diagnose.timelines = true;
      settings.locals = true;
    } else if (arg == "--no-stacks") {
      settings.stacks = false;
    } else if (arg == "--exit-status") {
      exit_status = true;
    } else if (arg == "--rank") {
      const char* v = next();
      if (v == nullptr || !parse_rank_list(v, settings.diagnose.only_ranks)) {
        return usage_error("--rank needs a rank list such as 3 or 0-2,5");
      }
    } else if (arg == "--job") {
      const char* v = next();
      if (v == nullptr || *v == '\0') return usage_error("--job needs a job key as listed under \"other jobs\", or a SLURM job id");
      settings.job.job = v;
    } else if (arg == "--pid") {
      const char* v = next();
      size_t pid = 0;
      if (v == nullptr || !parse_count(v, pid) || pid == 0) return usage_error("--pid needs a process id such as 4242");
      settings.job.pids.push_back(static_cast<int64_t>(pid));
    } else if (arg == "--comm") {
      const char* v = next();
      if (v == nullptr || *v == '\0') return usage_error("--comm needs a communicator name (world) or key prefix");
      settings.diagnose.only_comms.emplace_back(v);
    } else if (arg == "--library") {
      const char* v = next();
      if (v == nullptr || *v == '\0') return usage_error("--library needs a path pattern such as /mylib/");
      settings.libraries.emplace_back(v);
    } else if (arg == "--heartbeat-timeout") {
      const char* v = next();
      double seconds = 0;
      if (v == nullptr || !parse_seconds(v, seconds) || seconds <= 0) {
        return usage_error("--heartbeat-timeout needs a number of seconds such as 10");
      }
      settings.diagnose.heartbeat_timeout_ns = static_cast<uint64_t>(seconds * 1e9);
    } else if (arg == "--history") {
      const char* v = next();
      if (v == nullptr || !parse_count(v, settings.history) || settings.history == 0) {
        return usage_error("--history needs a positive number of calls such as 16");
      }
    } else if (arg == "--threads") {
      const char* v = next();
      if (v == nullptr || !parse_count(v, settings.threads) || settings.threads == 0 || settings.threads > 256) {
        return usage_error("--threads needs a number of threads from 1 to 256, such as 2");
      }
    } else if (!arg.empty() && arg[0] == '-') {
      return usage_error(fmt::format("unknown option {}", arg));
    } else {
      settings.paths.emplace_back(arg);
    }
  }
  // A text report is a few lines, so the inputs need not be freed to make room for it: they are
  // kept where the leak checker sees them reachable and go back to the system with the process
  // (as compilers leave their trees at exit). Over 131 072 ranks they are 850 MiB in 2.5 million
  // blocks, and freeing them one by one cost 0.2 s of a 3 s report. JSON and HTML documents are
  // large: their inputs are freed before they are written, which keeps the peak down.
  static report::Inputs* kept_until_exit = nullptr;
  bool keep = !json && html_path.empty();
  if (keep) kept_until_exit = new report::Inputs();
  report::Diagnosis d = run_report(settings, keep ? kept_until_exit : nullptr);
  // No ledger, but the shim is loaded in processes writing here: the job never called NCCL
  // (gloo, CPU), which is also why the directory may not exist. Say so, and where its stacks
  // are, instead of advising to start it with the shim.
  if (d.ledgers == 0) {
    d.shim_processes = report::find_shim_processes(ledger_paths(settings), default_ledger_dir());
  }
  if (d.shim_processes.empty()) print_input_errors(d);
  if (d.ledgers == 0) {
    // Why files that were read are not used (no rank, ...): otherwise the line below would be
    // all the user sees.
    for (const auto& w : d.warnings) fmt::print(stderr, "hangshim: {}\n", w);
    std::string where = settings.paths.empty() ? fmt::format(" in {}", default_ledger_dir()) : "";
    if (!d.shim_processes.empty()) {
      d.hints = report::hints_for(d);
      if (json) {
        fmt::print("{}", report::render_report_json(d));
      } else {
        fmt::print(stderr, "hangshim: {}\n", report::verdict_line(d));
        for (const auto& h : d.hints) fmt::print(stderr, "hangshim: {}\n", h);
      }
      return 1;
    }
    if (!d.warnings.empty()) {
      fmt::print(stderr, "hangshim: no ledger{} could be used (see above)\n", where);
    } else {
      fmt::print(stderr, "hangshim: no ledger could be read{} (run the job with `hangshim run` or "
                         "LD_PRELOAD=libhangshim.so; ledgers are in $HANGSHIM_DIR, default /dev/shm/hangshim-$UID)\n",
                 where);
    }
    if (json) fmt::print("{}", report::render_report_json(d));
    return 1;
  }
  if (!html_path.empty() && !write_file_atomically(html_path, report::render_report_html(d), "--html")) return 1;
  fmt::print("{}", json ? report::render_report_json(d) : report::render_report_text(d, {}));
  std::fflush(stdout);
  return exit_status && d.problem ? 3 : 0;
}

}  // namespace hangshim::cli
