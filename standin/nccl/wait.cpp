#include "wait.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <thread>

namespace fakenccl {
namespace {

struct TimeoutSetting {
  std::optional<std::chrono::nanoseconds> value;
  std::string text;
  std::string error;
};

// Read at the start of each operation (an operation keeps the deadline it started with): a
// test can set it in a rank once the ranks are in step, so only the wait it is about can time
// out, however late a loaded machine schedules the ranks before that.
TimeoutSetting timeout_setting() {
  TimeoutSetting s;
  const char* raw = std::getenv("HANGSHIM_FAKE_TIMEOUT");
  if (raw == nullptr || *raw == '\0') return s;
  s.text = std::string("HANGSHIM_FAKE_TIMEOUT=") + raw;
  char* end = nullptr;
  errno = 0;
  const double seconds = std::strtod(raw, &end);
  if (errno != 0 || end == raw || *end != '\0' || !std::isfinite(seconds) || seconds <= 0 || seconds > 1e9) {
    s.error = s.text + " is not a positive number of seconds (unset it to wait forever)";
    return s;
  }
  s.value = std::chrono::nanoseconds(static_cast<std::int64_t>(seconds * 1e9));
  return s;
}

}  // namespace

Deadline Deadline::for_operation() {
  if (auto t = fake_timeout()) return after(*t);
  return never();
}

std::optional<std::chrono::nanoseconds> Deadline::remaining(
    std::optional<std::chrono::nanoseconds> cap) const {
  if (!at_) return cap;
  auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(*at_ - Clock::now());
  left = std::max(left, std::chrono::nanoseconds(0));
  if (cap) left = std::min(left, *cap);
  return left;
}

std::optional<std::chrono::nanoseconds> fake_timeout() { return timeout_setting().value; }
std::string timeout_setting_error() { return timeout_setting().error; }
std::string timeout_setting_text() { return timeout_setting().text; }

void futex_wait(std::uint32_t* word, std::uint32_t expected,
                std::optional<std::chrono::nanoseconds> timeout) {
  timespec ts{};
  timespec* tsp = nullptr;
  if (timeout) {
    const auto ns = std::max<std::int64_t>(timeout->count(), 0);
    ts.tv_sec = static_cast<time_t>(ns / 1000000000);
    ts.tv_nsec = static_cast<long>(ns % 1000000000);
    tsp = &ts;
  }
  // Not FUTEX_PRIVATE_FLAG: the word lives in a MAP_SHARED mapping used by other processes.
  syscall(SYS_futex, word, FUTEX_WAIT, expected, tsp, nullptr, 0);
}

void futex_bump_and_wake(std::uint32_t* word) {
  std::atomic_ref<std::uint32_t>(*word).fetch_add(1, std::memory_order_acq_rel);
  syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

void backoff_sleep(int attempt) {
  const int ms = std::min(1 << std::min(attempt, 5), 20);
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

}  // namespace fakenccl
