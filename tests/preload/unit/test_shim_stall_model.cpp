// The stall model (ledger/stall_model.h): its rules one by one, then time-scaled jobs replayed
// through it as the watchdog would see them (stall_simulation.h): the targets with the
// default settings.
#include <doctest/doctest.h>

#include "ledger/stall_model.h"
#include "stall_simulation.h"

using hangshim::ledger::StallModel;
using hangshim::ledger::StallModelSettings;

namespace {
constexpr uint64_t kMs = 1000000, kS = 1000000000;
double seconds(uint64_t ns) { return static_cast<double>(ns) / 1e9; }
}  // namespace

TEST_CASE("shim stall model: buckets are sqrt(2) apart from 1 ms and cover hours") {
  CHECK(StallModel::bucket_of(0) == 0);
  CHECK(StallModel::bucket_of(kMs - 1) == 0);
  CHECK(StallModel::bucket_of(kMs) == 1);
  CHECK(StallModel::bucket_upper_ns(2) == 2 * kMs);
  for (uint32_t b = 1; b + 1 < StallModel::kBuckets; ++b) {
    uint64_t edge = StallModel::bucket_upper_ns(b);
    CHECK(StallModel::bucket_of(edge - 1) == b);
    CHECK(StallModel::bucket_of(edge) == b + 1);
  }
  CHECK(StallModel::bucket_upper_ns(StallModel::kBuckets - 1) > 3 * 3600 * kS);
  CHECK(StallModel::bucket_of(UINT64_MAX) == StallModel::kBuckets - 1);
}

TEST_CASE("shim stall model: keys tell communicators, call-sites and (without a call-site) ops apart") {
  CHECK(StallModel::key(0, 1, 1) != StallModel::key(1, 1, 1));
  CHECK(StallModel::key(0, 1, 1) == StallModel::key(0, 1, 2));  // a call-site is one line: its op is its own
  CHECK(StallModel::key(0, 0, 1) != StallModel::key(0, 0, 2));
  CHECK(StallModel::key(0, 0, 1) != 0);
}

TEST_CASE("shim stall model: a call-site seen fewer than min_samples times gets the new-site allowance") {
  StallModel m;
  uint64_t k = StallModel::key(0, 1, 1);
  CHECK(m.limit_ns(k) == 120 * kS);
  m.learn(k, 50 * kS);  // a first step that waited 50 s for compilation
  CHECK(m.limit_ns(k) == 200 * kS);  // 4 x the longest
  for (int i = 0; i < 18; ++i) m.learn(k, 3 * kMs);
  CHECK(m.samples(k) == 19);
  CHECK(m.limit_ns(k) == 200 * kS);
  m.learn(k, 3 * kMs);  // the 20th: the histogram is trusted, the 50 s outlier is not counted
  CHECK(m.limit_ns(k) == 6 * kS);
}

TEST_CASE("shim stall model: the limit follows the p99 of a slow call-site") {
  StallModel m;
  uint64_t k = StallModel::key(2, 7, 1);
  for (int i = 0; i < 1000; ++i) m.learn(k, (1500 + i % 10 * 100) * kMs);  // 1.5-2.4 s
  double limit = seconds(m.limit_ns(k));
  CHECK(limit >= 4 * 2.4);
  CHECK(limit <= 4 * 2.4 * 1.42);  // within a bucket (sqrt 2) of 4 x p99
}

TEST_CASE("shim stall model: after warm-up a long wait that completed is normal") {
  StallModel m;
  uint64_t k = StallModel::key(0, 1, 1);
  for (int i = 0; i < 100; ++i) m.learn(k, 2 * kMs);
  CHECK(m.limit_ns(k) == 6 * kS);  // pending 12 s here is a stall (the first checkpoint alarms)
  m.learn(k, 12 * kS);
  CHECK(m.limit_ns(k) == 18 * kS);  // it completed: 1.5 x 12 s from now on
  for (int i = 0; i < 1000; ++i) m.learn(k, 2 * kMs);
  CHECK(m.limit_ns(k) == 18 * kS);
}

TEST_CASE("shim stall model: counts halve instead of overflowing and keep the proportions") {
  StallModel m;
  uint64_t k = StallModel::key(0, 1, 1);
  for (int i = 0; i < 200000; ++i) m.learn(k, i % 50 == 0 ? 3 * kS : kMs);  // 2 % of the waits are 3 s
  CHECK(m.samples(k) == 200000);
  CHECK(m.limit_ns(k) == 12 * kS);  // 4 x p99, p99 = 3 s
}

TEST_CASE("shim stall model: a full table keeps learning what it has and gives the rest the allowance") {
  StallModel m({}, 16);  // 16 slots, 12 usable
  for (uint32_t site = 1; site <= 40; ++site) {
    for (int i = 0; i < 30; ++i) m.learn(StallModel::key(0, site, 1), kMs);
  }
  CHECK(m.dropped() > 0);
  uint32_t kept = 0;
  for (uint32_t site = 1; site <= 40; ++site) {
    uint64_t k = StallModel::key(0, site, 1);
    if (m.samples(k) > 0) {
      ++kept;
      CHECK(m.limit_ns(k) == 6 * kS);
    } else {
      CHECK(m.limit_ns(k) == 120 * kS);
    }
  }
  CHECK(kept == 12);
}

TEST_CASE("shim stall model, time-scaled: a hang at a fast call-site after checkpoints is declared within 10 s, no false alarm") {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    auto job = hangshim::sim::hang_after_checkpoints(seed);
    auto out = hangshim::sim::replay_learned(job);
    CAPTURE(seed);
    CHECK(out.false_alarms == 0);
    CHECK(out.detection_s > 0);
    CHECK(out.detection_s <= 10);
    // The fixed default of earlier versions, for comparison: 300 s.
    CHECK(hangshim::sim::replay_fixed(job, 300).detection_s == doctest::Approx(300));
  }
}

TEST_CASE("shim stall model, time-scaled: a healthy irregular hour raises no alarm") {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    auto job = hangshim::sim::healthy_hour(seed);
    auto out = hangshim::sim::replay_learned(job);
    CAPTURE(seed);
    CHECK(out.simulated_s >= 3600);
    CHECK(out.false_alarms == 0);
    CHECK(out.detection_s < 0);
    CHECK(hangshim::sim::replay_fixed(job, 10).false_alarms > 0);  // what a short fixed timeout does
  }
}

TEST_CASE("shim stall model, time-scaled: recurring waits at the same call-site alarm once, at their first time") {
  auto out = hangshim::sim::replay_learned(hangshim::sim::checkpoint_at_same_site());
  CHECK(out.false_alarms == 1);
  CHECK(out.detection_s == doctest::Approx(18).epsilon(0.01));  // 1.5 x 12 s
}

TEST_CASE("shim stall model, time-scaled: new and slow call-sites get their allowance") {
  CHECK(hangshim::sim::replay_learned(hangshim::sim::hang_at_new_site()).detection_s == doctest::Approx(120));
  auto slow = hangshim::sim::replay_learned(hangshim::sim::hang_at_slow_site());
  CHECK(slow.false_alarms == 0);
  CHECK(slow.detection_s > 6);
  CHECK(slow.detection_s < 30);
}
