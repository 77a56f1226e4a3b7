// The hot path's clock follows CLOCK_REALTIME, whether it reads the TSC (after calibration, on
// machines whose kernel keeps time with it) or the vDSO.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <utility>

#include "shim/core/clock.h"
#include "shim/core/clock_line.h"

using namespace hangshim::shim;

TEST_CASE("shim clock: now_ns stays within a millisecond of the wall clock") {
  calibrate_clock();
  usleep(30000);
  calibrate_clock();  // a second point 30 ms later completes a measurement
  for (int i = 0; i < 5; ++i) {
    uint64_t before = wall_ns();
    uint64_t now = now_ns();
    uint64_t after = wall_ns();
    CHECK(now + 1000000 >= before);
    CHECK(now <= after + 1000000);
    usleep(20000);
  }
  std::string source = clock_uses_tsc() ? "TSC" : "vDSO";
  MESSAGE("the clock reads the " << source);
}

// --- the line's rule (clock_line.h), driven by a simulated TSC and wall clock -------------

namespace {

// A TSC at 2.5 GHz and a wall clock read with some noise (the spread of read_pair's pairs),
// calibrated every 20 ms as the watchdog does.
struct SimulatedClock {
  uint64_t tsc = 1000000000;
  uint64_t wall = 1700000000000000000ull;
  ClockLine line;
  uint64_t start_tsc = 0;
  uint64_t start_ns = 0;
  int step = 0;

  int64_t noise() { return ((step * 7919) % 601) - 300; }  // within +-300 ns, deterministic
  // Advances both clocks by `ns` and calibrates; returns the line's reading just before and
  // just after the new line is published, at the same TSC.
  std::pair<uint64_t, uint64_t> calibrate_after(uint64_t ns, int64_t wall_step = 0) {
    tsc += ns * 5 / 2;
    wall = static_cast<uint64_t>(static_cast<int64_t>(wall + ns) + wall_step);
    ++step;
    uint64_t measured_ns = static_cast<uint64_t>(static_cast<int64_t>(wall) + noise());
    uint64_t before = line.scale != 0 ? line_ns(line, tsc) : 0;
    // As calibrate_clock(): a wall clock set back starts a new measurement instead.
    if (start_tsc != 0 && measured_ns > start_ns) line = next_clock_line(line, start_tsc, start_ns, tsc, measured_ns);
    start_tsc = tsc;
    start_ns = measured_ns;
    return {before, line_ns(line, tsc)};
  }
};

uint64_t distance(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

}  // namespace

TEST_CASE("shim clock: a new calibration never steps the line back and it keeps to the wall clock") {
  SimulatedClock c;
  c.calibrate_after(0);
  c.calibrate_after(20000000);
  for (int i = 0; i < 2000; ++i) {
    auto [before, after] = c.calibrate_after(20000000 + static_cast<uint64_t>(i % 5) * 1000000);
    CHECK(after == before);  // continuous at the new base
    CHECK(distance(after, c.wall) < 2000);
    // Within the interval the line rises.
    CHECK(line_ns(c.line, c.tsc + 1000) > after);
  }
}

TEST_CASE("shim clock: a small wall-clock step back is slewed, never stepped") {
  SimulatedClock c;
  c.calibrate_after(0);
  for (int i = 0; i < 10; ++i) c.calibrate_after(20000000);
  auto [before, after] = c.calibrate_after(20000000, -500000);  // NTP steps the clock back 0.5 ms
  CHECK(after == before);
  CHECK(distance(after, c.wall) > 400000);  // not followed at once
  auto [b, a] = c.calibrate_after(20000000);
  CHECK(a == b);
  CHECK(a > after);
  CHECK(distance(a, c.wall) < 2000);  // caught up over one interval, not overshooting
  for (int i = 0; i < 5; ++i) {
    auto [b2, a2] = c.calibrate_after(20000000);
    CHECK(a2 == b2);
    CHECK(distance(a2, c.wall) < 2000);
  }
}

TEST_CASE("shim clock: a wall clock set by more than a millisecond is followed at once") {
  SimulatedClock c;
  c.calibrate_after(0);
  for (int i = 0; i < 3; ++i) c.calibrate_after(20000000);
  auto [before, after] = c.calibrate_after(20000000, -10000000000ll);  // set back 10 s
  CHECK(before == after);  // no measurement spans a clock set back: a new one starts
  auto [was, now] = c.calibrate_after(20000000);  // which finds the line 10 s ahead
  CHECK(was > now);
  CHECK(distance(now, c.wall) < 1000);
  auto forward = c.calibrate_after(20000000, 3600000000000ll);  // forward an hour
  CHECK(distance(forward.second, c.wall) < 1000);
  // ... at the line's own rate, not one measured across the step.
  auto next = c.calibrate_after(20000000);
  CHECK(next.first == next.second);
  CHECK(distance(next.second, c.wall) < 2000);
}

TEST_CASE("shim clock: a TSC that keeps disagreeing with the wall clock is given up, one jump is not") {
  SimulatedClock c;
  c.calibrate_after(0);
  for (int i = 0; i < 3; ++i) c.calibrate_after(20000000);
  int jumps = 0;
  auto step = [&](int64_t wall_step) {
    ClockLine before = c.line;
    c.calibrate_after(20000000, wall_step);
    if (c.line.base_tsc == before.base_tsc) return true;  // no new line (as calibrate_clock: not asked)
    return tsc_still_trusted(jumps, before, c.line, c.tsc);
  };
  CHECK(step(-10000000000ll));  // the clock set back once: a new measurement starts
  CHECK(step(0));               // which jumps, once
  CHECK(jumps == 1);
  CHECK(step(0));
  CHECK(jumps == 0);
  // Off by milliseconds at every calibration: a TSC that differs between CPUs.
  CHECK(step(5000000));
  CHECK(step(-5000000));
  CHECK_FALSE(step(5000000));
}
