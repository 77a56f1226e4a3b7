// hangshim run [OPTIONS] [--] CMD [ARGS...]: runs CMD with libhangshim.so preloaded, so users
// need not know where the library is.
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/report_common.h"
#include "ledger/directory.h"
#include "ledger/identity.h"
#include "report/inputs/liveness.h"
#include "cli/subcommands.h"

namespace hangshim::cli {

namespace {

constexpr const char* kUsage =
    "usage: hangshim run [--dir DIR] [--stall S] [--shim LIB] [--quiet] [--] CMD [ARGS...]\n"
    "\n"
    "Runs CMD (torchrun, deepspeed, python train.py, srun ...) with libhangshim.so added to\n"
    "LD_PRELOAD (after what is already there) and HANGSHIM_DIR set, so every rank it starts keeps\n"
    "a ledger. hangshim replaces itself with CMD: signals reach CMD directly and CMD's exit status\n"
    "is hangshim's. When the job hangs: hangshim report (or hangshim watch while it runs).\n"
    "\n"
    "  --dir DIR    ledger directory (HANGSHIM_DIR; default: as set, else /dev/shm/hangshim-$UID)\n"
    "  --stall S    HANGSHIM_STALL_SECONDS: a fixed limit, a collective pending this long counts as\n"
    "               stalled (default: limits learned per call-site)\n"
    "  --shim LIB   the library to preload (default: found next to this hangshim, or in ../lib)\n"
    "  --quiet      no line on stderr saying where the ledgers go\n"
    "\n"
    "Exit status: CMD's; 2 usage; 126 CMD cannot be run; 127 CMD not found.\n";

std::string own_directory() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return {};
  std::string path(buf, static_cast<size_t>(n));
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

// libhangshim.so next to the executable (the build tree), or where `make install` put it
// relative to the bin directory.
std::string find_shim() {
  std::string dir = own_directory();
  if (dir.empty()) return {};
  for (const std::string& candidate : {dir + "/libhangshim.so", dir + "/" HANGSHIM_RELATIVE_LIBDIR "/libhangshim.so",
                                       dir + "/../lib/libhangshim.so", dir + "/../lib64/libhangshim.so"}) {
    if (::access(candidate.c_str(), R_OK) == 0) {
      char resolved[PATH_MAX];
      return ::realpath(candidate.c_str(), resolved) != nullptr ? std::string(resolved) : candidate;
    }
  }
  return {};
}

// LD_PRELOAD entries are separated by spaces or colons; ours goes last, once.
std::string with_preload(const char* existing, const std::string& shim) {
  std::string current = existing != nullptr ? existing : "";
  std::string entry;
  for (size_t i = 0; i <= current.size(); ++i) {
    if (i == current.size() || current[i] == ':' || current[i] == ' ') {
      if (entry == shim) return current;
      entry.clear();
    } else {
      entry += current[i];
    }
  }
  return current.empty() ? shim : current + ":" + shim;
}

int usage_error(const std::string& message) {
  fmt::print(stderr, "hangshim: {} (see hangshim run --help)\n", message);
  return 2;
}

}  // namespace

int cmd_run(std::span<char*> args) {
  std::string dir, stall, shim;
  bool quiet = false;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg == "--help" || arg == "-h") {
      fmt::print("{}", kUsage);
      return 0;
    }
    if (arg == "--quiet" || arg == "-q") {
      quiet = true;
    } else if (arg == "--dir" || arg == "--stall" || arg == "--shim") {
      if (i + 1 >= args.size() || *args[i + 1] == '\0') return usage_error(fmt::format("{} needs a value", arg));
      (arg == "--dir" ? dir : arg == "--stall" ? stall : shim) = args[++i];
    } else if (!arg.empty() && arg[0] == '-') {
      return usage_error(fmt::format("unknown option {}; put the command after --", arg));
    } else {
      break;  // the command
    }
  }
  if (i >= args.size()) return usage_error("no command to run (e.g. hangshim run -- torchrun --nproc-per-node 8 train.py)");
  if (!stall.empty()) {
    double seconds = 0;
    if (!parse_seconds(stall, seconds) || seconds < 1) return usage_error("--stall needs whole seconds, at least 1");
  }
  if (shim.empty()) shim = find_shim();
  if (shim.empty() || ::access(shim.c_str(), R_OK) != 0) {
    fmt::print(stderr, "hangshim: cannot find libhangshim.so{} (it is installed next to hangshim or in ../lib; pass "
                       "--shim PATH)\n", shim.empty() ? "" : fmt::format(" at {}", shim));
    return 2;
  }
  if (!dir.empty()) {
    ::setenv("HANGSHIM_DIR", dir.c_str(), 1);
  } else if (std::getenv("HANGSHIM_DIR") == nullptr || *std::getenv("HANGSHIM_DIR") == '\0') {
    ::setenv("HANGSHIM_DIR", default_ledger_dir().c_str(), 1);
  }
  if (!stall.empty()) ::setenv("HANGSHIM_STALL_SECONDS", stall.c_str(), 1);
  ::setenv("LD_PRELOAD", with_preload(std::getenv("LD_PRELOAD"), shim).c_str(), 1);
  // The job's name for its ledgers: this process (it becomes the command: exec keeps the pid
  // and start time), so that the report tells this job from others in the same directory. An
  // outer `hangshim run` already named the job.
  if (const char* outer = std::getenv("HANGSHIM_LAUNCHER"); outer == nullptr || *outer == '\0') {
    int64_t self = ::getpid();
    ::setenv("HANGSHIM_LAUNCHER", fmt::format("{}:{}:{}", report::this_host(), self, ledger::process_start_ticks(self)).c_str(), 1);
  }
  // The directory now, with the shim's own checks, so that the report named below finds it even
  // if no process ever calls NCCL (a gloo job: the report then says so instead of "no such
  // directory"). A directory the shim would refuse is said once here; the job still runs.
  if (auto made = ledger::prepare_directory(std::getenv("HANGSHIM_DIR"), ::getuid()); !made) {
    fmt::print(stderr, "hangshim: warning: {}{} (the shim will not record)\n", made.error().message,
               made.error().hint.empty() ? "" : fmt::format(" ({})", made.error().hint));
  }
  if (!quiet) {
    fmt::print(stderr, "hangshim: ledgers in {}; if the job hangs: hangshim report {}\n", std::getenv("HANGSHIM_DIR"),
               std::getenv("HANGSHIM_DIR"));
  }
  std::vector<char*> argv(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  int err = errno;
  fmt::print(stderr, "hangshim: cannot run {}: {}\n", argv[0], std::strerror(err));
  return err == ENOENT ? 127 : 126;
}

}  // namespace hangshim::cli
