#include "report/inputs/liveness.h"

#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "pyframes/proc_stat.h"

namespace hangshim::report {

namespace {

// A process's start, in clock ticks since boot, is stored with 1/HZ resolution and boot time in
// whole seconds: allow for both when comparing with the ledger's creation time.
constexpr uint64_t kSlackNs = 2'000'000'000ull;

uint64_t boot_time_ns() {
  static const uint64_t cached = []() -> uint64_t {
    std::ifstream stat("/proc/stat");
    std::string key;
    uint64_t value = 0;
    while (stat >> key) {
      if (key == "btime" && (stat >> value)) return value * uint64_t{1'000'000'000};
      stat.ignore(1 << 16, '\n');
    }
    return uint64_t{0};
  }();
  return cached;
}

}  // namespace

uint64_t realtime_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint64_t process_start_ns(int64_t pid, bool* zombie) {
  *zombie = false;
  pyframes::ProcStat stat;
  if (!pyframes::read_proc_stat(pid, stat)) return 0;
  *zombie = stat.state == 'Z' || stat.state == 'X';
  uint64_t start_ticks = stat.start_ticks;
  long hz = sysconf(_SC_CLK_TCK);
  uint64_t boot = boot_time_ns();
  if (hz <= 0 || boot == 0) return 0;
  return boot + start_ticks * (1'000'000'000ull / static_cast<uint64_t>(hz));
}

Liveness judge_liveness(const std::string& host, int64_t pid, uint64_t ledger_start_ns, const std::string& here) {
  if (here.empty() || host != here) return Liveness::Unknown;
  bool zombie = false;
  uint64_t started = process_start_ns(pid, &zombie);
  if (started == 0 || zombie) return Liveness::Gone;
  if (ledger_start_ns != 0 && started > ledger_start_ns + kSlackNs) return Liveness::Recycled;
  return Liveness::Alive;
}

}  // namespace hangshim::report
