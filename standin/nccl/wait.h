// Waiting without locks: deadlines, the HANGSHIM_FAKE_TIMEOUT setting and futex wait/wake on a
// 32-bit word in shared memory (process-shared futexes work across processes mapping the page).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace fakenccl {

using Clock = std::chrono::steady_clock;

// When a wait gives up. Without HANGSHIM_FAKE_TIMEOUT waits are unbounded: a real hang.
class Deadline {
 public:
  static Deadline never() { return Deadline{}; }
  static Deadline after(std::chrono::nanoseconds d) { return Deadline{Clock::now() + d}; }
  // The deadline for a blocking NCCL operation starting now, from HANGSHIM_FAKE_TIMEOUT.
  static Deadline for_operation();

  bool expired() const { return at_ && Clock::now() >= *at_; }
  bool finite() const { return at_.has_value(); }
  // Time left, capped at `cap` (used to poll several futex words at once).
  std::optional<std::chrono::nanoseconds> remaining(std::optional<std::chrono::nanoseconds> cap) const;

 private:
  Deadline() = default;
  explicit Deadline(Clock::time_point at) : at_(at) {}
  std::optional<Clock::time_point> at_;
};

// HANGSHIM_FAKE_TIMEOUT in seconds (test use only); nullopt when unset. An unparsable value is
// reported by timeout_setting_error() and treated as unset.
std::optional<std::chrono::nanoseconds> fake_timeout();
// Non-empty when HANGSHIM_FAKE_TIMEOUT is set but is not a positive number of seconds.
std::string timeout_setting_error();
// The raw setting, for messages ("HANGSHIM_FAKE_TIMEOUT=2").
std::string timeout_setting_text();

// Blocks while *word == expected, at most `timeout` (forever when nullopt). Spurious returns are
// allowed; callers re-check their condition.
void futex_wait(std::uint32_t* word, std::uint32_t expected,
                std::optional<std::chrono::nanoseconds> timeout);
// Bumps *word and wakes every waiter on it, in every process.
void futex_bump_and_wake(std::uint32_t* word);

// Sleeps for a short, growing interval (used only while a segment does not exist yet).
void backoff_sleep(int attempt);

}  // namespace fakenccl
