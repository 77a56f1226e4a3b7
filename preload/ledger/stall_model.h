// How long is too long for a pending NCCL call: learned per communicator and call-site.
//
// A fixed timeout cannot tell a hang from a slow but normal wait: ranks wait a minute in the
// collective after rank 0's checkpoint, an evaluation barrier waits for the slowest evaluator,
// the first step waits for compilation. A hang is a wait far outside what *that* call normally
// takes. The model keeps, per key (communicator, call-site), a histogram of how long its calls
// stayed pending (issue to completion), and answers one question: after how long is a call with
// this key stalled?
//
//   its first min_samples calls (warm-up):  max(new_site_seconds, slack x the longest wait)
//   afterwards:                             max(floor_seconds, slack x p99,
//                                               recurring_slack x the longest wait since warm-up)
//
// p99 never counts the warm-up's longest wait: a 40 s first step (compilation) must not set the
// limit for the thousand steps after it. After warm-up a long wait that completed is normal:
// a checkpoint every few hundred steps that makes the others wait at this very collective
// alarms at its first time only, then is allowed again, with room. So a hang at a call-site
// whose calls take milliseconds is declared after floor_seconds; a call-site whose waits are
// seconds gets `slack` times its p99; a call-site seen for the first time (a first checkpoint
// barrier, an evaluation barrier, the first step) gets the generous new-site allowance.
//
// No allocation after construction and no system call: the shim's watchdog owns one (its table
// allocated once, when the watchdog starts); `hangshim watch` builds a small one per rank from
// the ledger's ring. Not thread-safe: one owner.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace hangshim::ledger {

struct StallModelSettings {
  double floor_seconds = 6;       // the least a learned limit can be
  double new_site_seconds = 120;  // the allowance of a call-site seen fewer than min_samples times
  double slack = 4;               // limit = slack x p99 (in warm-up: x the longest wait)
  double recurring_slack = 1.5;   // ... at least this times the longest wait since warm-up
  uint32_t min_samples = 20;      // a call-site's warm-up: its first calls
};

class StallModel {
 public:
  static constexpr uint32_t kBuckets = 48;  // bucket 0: under 1 ms; b: under 2^(b/2) ms; the last: any

  // `slots`: keys kept (rounded up to a power of two); keys beyond are not learned.
  explicit StallModel(StallModelSettings settings = {}, uint32_t slots = 2048);

  // The key of a call: its communicator entry and call-site id, or, with no call-site (no
  // Python), its communicator entry and op.
  static uint64_t key(uint32_t comm, uint32_t callsite, uint8_t op);

  // One completed call with this key stayed pending `wait_ns`.
  void learn(uint64_t key, uint64_t wait_ns);
  // After how many nanoseconds pending a call with this key is stalled.
  uint64_t limit_ns(uint64_t key) const;
  // Waits learned for this key (0 if never seen or not kept).
  uint32_t samples(uint64_t key) const;
  // Keys that could not be kept (the table was full): they get the new call-site allowance.
  uint64_t dropped() const { return dropped_; }
  const StallModelSettings& settings() const { return settings_; }

  // The bucket of a wait and the longest wait a bucket holds (exposed for tests).
  static uint32_t bucket_of(uint64_t wait_ns);
  static uint64_t bucket_upper_ns(uint32_t bucket);

 private:
  struct Slot {
    uint64_t key = 0;  // 0: empty (real keys are never 0)
    uint64_t longest_ns = 0;         // in warm-up
    uint64_t steady_longest_ns = 0;  // since warm-up
    uint32_t samples = 0;
    uint32_t counted = 0;            // sum of counts (they halve when one would overflow)
    std::array<uint16_t, kBuckets> counts{};
  };
  const Slot* find(uint64_t key) const;
  Slot* find_or_add(uint64_t key);

  StallModelSettings settings_;
  std::vector<Slot> slots_;
  size_t used_ = 0;
  uint64_t dropped_ = 0;
};

}  // namespace hangshim::ledger
