// Wall-clock time for the hot path. clock_gettime(CLOCK_REALTIME) through the vDSO costs
// 15-30 ns, twice per recorded call; where the kernel itself keeps time with an invariant TSC
// (its clocksource is "tsc"), the shim instead reads the TSC (a few ns) and converts it with a
// scale the watchdog re-measures against CLOCK_REALTIME on every tick, so the result follows
// the wall clock (NTP included) to well under a microsecond. Before the first calibration, on
// other clocksources and on other CPUs, it is clock_gettime.
#pragma once

#include <cstdint>

namespace hangshim::shim {

// CLOCK_REALTIME in nanoseconds. Never a syscall.
uint64_t now_ns() noexcept;
// clock_gettime(CLOCK_REALTIME) in nanoseconds (the reference).
uint64_t wall_ns() noexcept;
// Re-measures the TSC against the wall clock. Called by one thread only (the watchdog).
void calibrate_clock() noexcept;
// True once now_ns() reads the TSC (tests).
bool clock_uses_tsc() noexcept;

}  // namespace hangshim::shim
