// The line that turns TSC ticks into wall-clock nanoseconds, and how a new measurement moves
// it. Kept apart from the TSC and the seqlock (clock.cpp) so the rule can be tested with any
// wall clock, including one that steps.
//
// Why not just re-anchor at each measurement: the wall clock read at a calibration differs from
// the old line's prediction by the measurement's noise (tens to hundreds of ns). Re-anchoring
// would step now_ns() back by that much, and a call that starts just before a calibration and
// ends just after would end before it started. Instead the line stays continuous and its slope
// absorbs the difference over the next interval, as NTP slews; only a wall-clock step larger
// than kMaxSlewNs (someone set the clock) is followed at once.
#pragma once

#include <cstdint>

namespace hangshim::shim {

struct ClockLine {
  uint64_t base_tsc = 0;
  uint64_t base_ns = 0;
  uint64_t scale = 0;  // nanoseconds per tick, 32.32 fixed point; 0: no line yet
};

inline constexpr int64_t kMaxSlewNs = 1000000;  // 1 ms
inline constexpr int64_t kNoiseNs = 20000;       // a (tsc, wall) pair is read to well under this

// Wall-clock nanoseconds the line gives for `tsc` (signed ticks: another CPU's TSC may read a
// hair behind the base). Inline: the hot path's now_ns() is this and one TSC read.
inline uint64_t line_ns(const ClockLine& line, uint64_t tsc) noexcept {
  __extension__ typedef __int128 int128;
  int64_t ticks = static_cast<int64_t>(tsc - line.base_tsc);
  int128 delta = static_cast<int128>(ticks) * static_cast<int128>(line.scale);
  return line.base_ns + static_cast<uint64_t>(static_cast<int64_t>(delta >> 32));
}

// The next line, from the current one and a measurement: the pair (start_tsc, start_ns) from the
// previous calibration and (tsc, ns) now, tsc > start_tsc and ns > start_ns.
ClockLine next_clock_line(const ClockLine& current, uint64_t start_tsc, uint64_t start_ns, uint64_t tsc,
                          uint64_t ns) noexcept;

// Whether the TSC still follows the wall clock: a wall clock set by hand makes the line jump
// once; a TSC that is not synchronized across CPUs (the calibrating thread moves between them)
// makes it jump again and again. `jumps` counts jumps in a row; after kMaxJumps the TSC is given up.
inline constexpr int kMaxJumps = 3;
inline bool tsc_still_trusted(int& jumps, const ClockLine& previous, const ClockLine& next, uint64_t tsc) noexcept {
  bool jumped = previous.scale != 0 && next.base_ns != line_ns(previous, tsc);
  jumps = jumped ? jumps + 1 : 0;
  return jumps < kMaxJumps;
}

}  // namespace hangshim::shim
