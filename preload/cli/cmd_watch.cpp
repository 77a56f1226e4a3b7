// hangshim watch [PATH ...]: a live table of where the ranks are (merged into groups), refreshed
// every --interval seconds; when a rank's call is pending past its limit (the limit the shim's
// watchdog learns, report/analysis/overdue_calls.h), a ledger says stalled, nothing has moved
// for the no-progress time, or every rank has exited, the full report (with live stacks) is
// printed and watch exits.
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/report_common.h"
#include "cli/subcommands.h"
#include "report/analysis/overdue_calls.h"
#include "report/inputs/liveness.h"
#include "report/inputs/shim_processes.h"
#include "report/wording/phrases.h"
#include "report/analysis/rank_ranges.h"
#include "report/wording/render.h"
#include "report/wording/state_words.h"
#include "report/wording/straggler_words.h"

namespace hangshim::cli {

namespace {

constexpr const char* kUsage =
    "usage: hangshim watch [PATH ...] [--interval S] [--stall S] [--timeout S] [--json] [--exit-status]\n"
    "                      [--library PATTERN]\n"
    "\n"
    "Shows where every rank is (collective, number, line, iteration; ranks in the same place on one\n"
    "line), refreshed every --interval seconds (on a terminal in place, else reprinted). Prints the\n"
    "report (as hangshim report does) and exits when a rank's call has been pending past its limit\n"
    "(learned per call-site from the ledger, as the shim's watchdog learns it, or the job's fixed\n"
    "HANGSHIM_STALL_SECONDS), when a ledger says stalled, when no rank has made progress for the\n"
    "no-progress time, or when every rank has exited. PATH as for hangshim report (default\n"
    "$HANGSHIM_DIR).\n"
    "\n"
    "  --interval S    refresh period (default 2)\n"
    "  --stall S       a fixed rule instead: only no progress for S seconds ends the watch\n"
    "                  (default: the learned limits, and no progress for 120 s)\n"
    "  --timeout S     give up after S seconds without a report (default: never); exit 1\n"
    "  --json          the final report as JSON\n"
    "  --exit-status   exit 3 when the final report finds a problem\n"
    "  --library P     as for hangshim report\n"
    "\n"
    "Exit status: 0 report printed; 1 --timeout reached; 2 usage; 3 (--exit-status) a problem.\n";

// Without --stall: no progress at all for this long also ends the watch (a job stuck outside NCCL
// has no pending call to judge); as long as the shim's allowance for a call-site never seen.
constexpr double kNoProgressSeconds = 120;

double monotonic_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// Everything that moves while a job makes progress: calls recorded, completions, states.
std::string progress_signature(const report::Inputs& inputs) {
  std::string sig;
  for (const auto& v : inputs.ranks) {
    sig += fmt::format("{}:{}:{}:{}", v.rank, v.header.pid, v.header.ring_head, v.header.state);
    for (const auto& c : v.comms) sig += fmt::format(",{}/{}/{}", c.coll_completed, c.p2p_completed, c.state);
    sig += ';';
  }
  return sig;
}

bool all_exited(const report::Diagnosis& d) {
  if (d.situations.empty()) return false;
  for (const auto& s : d.situations) {
    if (s.state != report::RankState::Exited && s.state != report::RankState::Dead) return false;
  }
  return true;
}

// No ledger yet: the job has not called NCCL, or never will (gloo, the CPU) when the shim is
// already loaded in its processes. Says which.
std::string no_ledger_line(const std::vector<report::ShimProcess>& shim) {
  if (shim.empty()) return "  (no ledgers yet: waiting for the job's first NCCL call)\n";
  std::vector<std::string> names;
  for (const auto& p : shim) names.push_back(report::shim_process_name(p));
  return fmt::format("  (no ledgers: the shim is loaded in {} process{} here ({}) and none has called NCCL yet: a job on "
                     "gloo or the CPU never will; `pyframes --children {}` shows where they are)\n",
                     shim.size(), shim.size() == 1 ? "" : "es", fmt::join(names, ", "), report::state_words::shim_root(shim));
}

std::string table(const report::Diagnosis& d, double still_for, const std::vector<std::string>& paths,
                  const std::vector<report::ShimProcess>& shim) {
  std::string out = fmt::format("hangshim watch {}  —  {} ranks, ", fmt::join(paths, " "), d.situations.size());
  for (const auto& c : d.comms) {
    out += fmt::format("{}: issued {}{}, completed {}{}; ", c.name, c.issued_min,
                       c.issued_max != c.issued_min ? fmt::format("-{}", c.issued_max) : "", c.completed_min,
                       c.completed_max != c.completed_min ? fmt::format("-{}", c.completed_max) : "");
  }
  out += fmt::format("last change {:.0f} s ago\n", still_for);
  size_t width = 0;
  for (const auto& g : d.groups) width = std::max(width, report::ranks_phrase(g.ranks).size());
  for (const auto& g : d.groups) {
    out += fmt::format("  {:<{}}  {}\n", report::ranks_phrase(g.ranks), width, report::situation_text(d, d.situations[g.example]));
  }
  if (d.groups.empty()) out += no_ledger_line(shim);
  for (const auto& s : d.stragglers) out += fmt::format("  straggler: {}\n", report::straggler_clause(d, s));
  return out;
}

}  // namespace

int cmd_watch(std::span<char*> args) {
  ReportSettings settings;
  double interval = 2, stall = kNoProgressSeconds, timeout = 0;
  bool fixed_stall = false;
  bool json = false, exit_status = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--help" || arg == "-h") {
      fmt::print("{}", kUsage);
      return 0;
    } else if (arg == "--json") {
      json = true;
    } else if (arg == "--exit-status") {
      exit_status = true;
    } else if (arg == "--interval" || arg == "--stall" || arg == "--timeout") {
      double value = 0;
      if (i + 1 >= args.size() || !parse_seconds(args[i + 1], value) || (arg != "--timeout" && value <= 0)) {
        fmt::print(stderr, "hangshim: {} needs a number of seconds (see hangshim watch --help)\n", arg);
        return 2;
      }
      ++i;
      (arg == "--interval" ? interval : arg == "--stall" ? stall : timeout) = value;
      fixed_stall = fixed_stall || arg == "--stall";
    } else if (arg == "--library") {
      if (i + 1 >= args.size()) {
        fmt::print(stderr, "hangshim: --library needs a path pattern (see hangshim watch --help)\n");
        return 2;
      }
      settings.libraries.emplace_back(args[++i]);
    } else if (!arg.empty() && arg[0] == '-') {
      fmt::print(stderr, "hangshim: unknown option {} (see hangshim watch --help)\n", arg);
      return 2;
    } else {
      settings.paths.emplace_back(arg);
    }
  }
  std::vector<std::string> shown = ledger_paths(settings);
  const bool tty = ::isatty(STDOUT_FILENO) != 0 && std::getenv("TERM") != nullptr;
  const double started = monotonic_seconds();
  std::string last_signature;
  double last_change = started;
  ReportSettings quick = settings;
  quick.stacks = false;  // the table needs no stacks; the final report reads them
  for (;;) {
    report::Inputs inputs;
    report::Diagnosis d = run_report(quick, &inputs);
    double now = monotonic_seconds();
    std::string signature = progress_signature(inputs);
    if (signature != last_signature) {
      last_signature = signature;
      last_change = now;
    }
    double still = now - last_change;
    bool stalled = !inputs.ranks.empty() && still >= stall;
    if (!fixed_stall && !stalled) {
      // As the shim's watchdog decides (its ledger may say so already, or its thread may not run).
      stalled = !report::overdue_calls(inputs, report::realtime_now_ns()).empty();
      for (const auto& v : inputs.ranks) stalled = stalled || v.header.state == static_cast<uint32_t>(ledger::ProcessState::Stalled);
    }
    bool finished = all_exited(d);
    std::vector<report::ShimProcess> shim;
    if (inputs.ranks.empty()) shim = report::find_shim_processes(shown, default_ledger_dir());
    std::string frame = table(d, still, shown, shim);
    fmt::print("{}{}", tty ? "\x1b[H\x1b[2J" : "\n", frame);
    std::fflush(stdout);
    if (stalled || finished) {
      // Ended by --stall S: a call pending that long is what the user called a stall, so the
      // report does not call it in flight by a longer limit its ledger would learn.
      ReportSettings final_settings = settings;
      if (fixed_stall) final_settings.diagnose.stall_limit_ns = static_cast<uint64_t>(stall * 1e9);
      report::Diagnosis full = run_report(final_settings);
      print_input_errors(full);
      fmt::print("\n{}", json ? report::render_report_json(full) : report::render_report_text(full, {}));
      std::fflush(stdout);
      return exit_status && full.problem ? 3 : 0;
    }
    if (timeout > 0 && now - started >= timeout) {
      fmt::print(stderr, "hangshim: watch gave up after {:.0f} s{}\n", timeout,
                 !inputs.ranks.empty() ? " while the job still made progress"
                 : shim.empty()        ? " without finding a ledger"
                                       : fmt::format(" without a ledger: the shim is loaded in {} process(es) here that never "
                                                     "called NCCL (gloo or the CPU): their stacks are the diagnosis "
                                                     "(pyframes --children {})", shim.size(), report::state_words::shim_root(shim)));
      return 1;
    }
    timespec pause{static_cast<time_t>(interval), static_cast<long>((interval - static_cast<double>(static_cast<time_t>(interval))) * 1e9)};
    while (nanosleep(&pause, &pause) != 0) {
    }
  }
}

}  // namespace hangshim::cli
