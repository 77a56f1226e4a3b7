#include "shim/core/clock.h"

#include "shim/core/clock_line.h"

#include <time.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#if defined(__x86_64__)
#include <x86intrin.h>

// The seqlock fences below are what the C++ memory model needs; ThreadSanitizer does not model
// fences (GCC warns under -fsanitize=thread), but every access they order is atomic, so it
// reports nothing either way.
#if defined(__SANITIZE_THREAD__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wtsan"
#endif
#endif

namespace hangshim::shim {

namespace {

// Published by calibrate_clock() under a sequence number (odd while being changed).
std::atomic<uint64_t> g_sequence{0};
std::atomic<uint64_t> g_base_tsc{0};
std::atomic<uint64_t> g_base_ns{0};
std::atomic<uint64_t> g_scale{0};  // nanoseconds per TSC tick, 32.32 fixed point
std::atomic<bool> g_use_tsc{false};

// The calibrating thread's own state.
int g_supported = -1;  // -1 not checked, 0 no, 1 yes
uint64_t g_start_tsc = 0;
uint64_t g_start_ns = 0;
ClockLine g_line;  // the published line, as the calibrating thread last set it
int g_jumps = 0;   // calibrations in a row that found the line off by more than kMaxSlewNs

constexpr uint64_t kMinInterval = 20000000;  // 20 ms between the two points of a measurement

#if defined(__x86_64__)
inline uint64_t read_tsc() noexcept { return __rdtsc(); }

bool file_has(const char* path, const char* const* words, size_t count, size_t limit) {
  FILE* f = std::fopen(path, "re");
  if (f == nullptr) return false;
  char line[4096];
  size_t found = 0;
  bool seen[4] = {};
  for (size_t lines = 0; lines < limit && std::fgets(line, sizeof line, f) != nullptr; ++lines) {
    for (size_t i = 0; i < count; ++i) {
      if (!seen[i] && std::strstr(line, words[i]) != nullptr) {
        seen[i] = true;
        ++found;
      }
    }
    if (found == count) break;
  }
  std::fclose(f);
  return found == count;
}

// The kernel keeps time with the TSC: its clocksource is "tsc" (it found the TSC invariant and
// synchronized across CPUs), or "kvm-clock" on an invariant TSC (KVM guests: kvm-clock is the
// TSC scaled per vCPU by the host, and the kernel reads it in the vDSO only when the host marks
// it stable across vCPUs). Either way calibrate_clock() checks the result against the wall clock
// on every tick and gives the TSC up if it keeps disagreeing.
bool tsc_trusted() {
  const char* source = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
  const char* tsc[] = {"tsc"};
  const char* kvm[] = {"kvm-clock"};
  const char* flags[] = {" constant_tsc", " nonstop_tsc"};
  return (file_has(source, tsc, 1, 1) || file_has(source, kvm, 1, 1)) && file_has("/proc/cpuinfo", flags, 2, 64);
}

// A (tsc, wall) pair read as close together as possible: the tightest of a few tries.
void read_pair(uint64_t* tsc, uint64_t* ns) {
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 5; ++i) {
    uint64_t before = read_tsc();
    uint64_t wall = wall_ns();
    uint64_t after = read_tsc();
    if (after - before < best) {
      best = after - before;
      *tsc = before + (after - before) / 2;
      *ns = wall;
    }
  }
}
#endif

}  // namespace

uint64_t wall_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint64_t now_ns() noexcept {
#if defined(__x86_64__)
  if (g_use_tsc.load(std::memory_order_relaxed)) {
    for (int attempt = 0; attempt < 4; ++attempt) {
      uint64_t sequence = g_sequence.load(std::memory_order_acquire);
      uint64_t base_tsc = g_base_tsc.load(std::memory_order_relaxed);
      uint64_t base_ns = g_base_ns.load(std::memory_order_relaxed);
      uint64_t scale = g_scale.load(std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_acquire);
      if ((sequence & 1) != 0 || g_sequence.load(std::memory_order_relaxed) != sequence) continue;
      return line_ns(ClockLine{base_tsc, base_ns, scale}, read_tsc());
    }
  }
#endif
  return wall_ns();
}

bool clock_uses_tsc() noexcept { return g_use_tsc.load(std::memory_order_relaxed); }

void calibrate_clock() noexcept {
#if defined(__x86_64__)
  if (g_supported < 0) g_supported = tsc_trusted() ? 1 : 0;
  if (g_supported == 0) return;
  uint64_t tsc = 0;
  uint64_t ns = 0;
  read_pair(&tsc, &ns);
  if (g_start_tsc == 0 || tsc <= g_start_tsc || ns <= g_start_ns) {
    g_start_tsc = tsc;
    g_start_ns = ns;
    return;
  }
  if (ns - g_start_ns < kMinInterval) return;
  // Continuous with the line now_ns() reads, so it never steps back (clock_line.h).
  ClockLine line = next_clock_line(g_line, g_start_tsc, g_start_ns, tsc, ns);
  if (line.scale == 0) return;
  if (!tsc_still_trusted(g_jumps, g_line, line, tsc)) {  // back to the vDSO for good
    g_use_tsc.store(false, std::memory_order_relaxed);
    g_supported = 0;
    return;
  }
  uint64_t sequence = g_sequence.load(std::memory_order_relaxed);
  g_sequence.store(sequence + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  g_base_tsc.store(line.base_tsc, std::memory_order_relaxed);
  g_base_ns.store(line.base_ns, std::memory_order_relaxed);
  g_scale.store(line.scale, std::memory_order_relaxed);
  g_sequence.store(sequence + 2, std::memory_order_release);
  g_use_tsc.store(true, std::memory_order_relaxed);
  g_line = line;
  g_start_tsc = tsc;
  g_start_ns = ns;
#endif
}

}  // namespace hangshim::shim
