// The hot path's clock follows CLOCK_REALTIME, whether it reads the TSC (after calibration, on
// machines whose kernel keeps time with it) or the vDSO.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdint>

#include "shim/core/clock.h"

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
  MESSAGE("the clock reads the " << (clock_uses_tsc() ? "TSC" : "vDSO"));
}
