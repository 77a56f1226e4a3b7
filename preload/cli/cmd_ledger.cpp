// hangshim ledger FILE [--json] [--records N | --all] [--image]: one process's ledger, as recorded.
#include <fmt/format.h>
#include <unistd.h>

#include <charconv>
#include <ctime>
#include <string>

#include "cli/ledger_render.h"
#include "cli/subcommands.h"
#include "ledger/reader.h"

namespace hangshim::cli {

namespace {

constexpr const char* kUsage =
    "usage: hangshim ledger FILE [--json] [--records N | --all] [--image]\n"
    "\n"
    "Prints one process's ledger: who it is (host, pid, rank), its communicators with their\n"
    "collective counters, the newest calls in the ring (op, sequence number, size, state,\n"
    "iteration of its call-site) and the Python call-sites. Works on live ledgers, on those of\n"
    "stopped or killed processes and on copies.\n"
    "\n"
    "  --json        everything, as JSON (all records)\n"
    "  --records N   text: show the newest N records (default 32)\n"
    "  --all         text: show every record in the ring\n"
    "  --image       FILE is a copy of the memory the ledger was mapped at (read out of a process\n"
    "                or a core by a debugger): it may run on to the end of the mapping's page\n";

uint64_t realtime_now() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000 + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

int cmd_ledger(std::span<char*> args) {
  std::string path;
  bool json = false;
  ledger::LedgerBytes bytes = ledger::LedgerBytes::File;
  LedgerRenderOptions options;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--help" || arg == "-h") {
      fmt::print("{}", kUsage);
      return 0;
    }
    if (arg == "--json") {
      json = true;
    } else if (arg == "--image") {
      bytes = ledger::LedgerBytes::MappingImage;
    } else if (arg == "--all") {
      options.max_records = 0;
    } else if (arg == "--records") {
      if (i + 1 >= args.size()) {
        fmt::print(stderr, "hangshim: --records needs a number (e.g. --records 100)\n");
        return 2;
      }
      std::string_view n = args[++i];
      auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), options.max_records);
      if (ec != std::errc() || end != n.data() + n.size()) {
        fmt::print(stderr, "hangshim: --records {}: not a number (e.g. --records 100)\n", n);
        return 2;
      }
    } else if (!arg.empty() && arg[0] == '-') {
      fmt::print(stderr, "hangshim: unknown option {} (see hangshim ledger --help)\n", arg);
      return 2;
    } else if (path.empty()) {
      path = arg;
    } else {
      fmt::print(stderr, "hangshim: one ledger at a time ({} and {}); use hangshim report for several\n", path, arg);
      return 2;
    }
  }
  if (path.empty()) {
    fmt::print(stderr, "hangshim: no ledger given (usage: hangshim ledger FILE; ledgers are in $HANGSHIM_DIR, default /dev/shm/hangshim-$UID)\n");
    return 2;
  }
  auto ledger = ledger::read_ledger_file(path, bytes);
  if (!ledger) {
    const auto& e = ledger.error();
    fmt::print(stderr, "hangshim: {}{}\n", e.message, e.hint.empty() ? "" : fmt::format(" ({})", e.hint));
    return 1;
  }
  options.now_ns = realtime_now();
  std::string out = json ? render_ledger_json(*ledger) : render_ledger_text(*ledger, options);
  fmt::print("{}", out);
  return 0;
}

}  // namespace hangshim::cli
