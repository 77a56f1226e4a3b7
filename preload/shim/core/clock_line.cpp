#include "shim/core/clock_line.h"

namespace hangshim::shim {

namespace {
__extension__ typedef __int128 int128;
__extension__ typedef unsigned __int128 uint128;
}  // namespace

ClockLine next_clock_line(const ClockLine& current, uint64_t start_tsc, uint64_t start_ns, uint64_t tsc,
                          uint64_t ns) noexcept {
  uint64_t ticks = tsc - start_tsc;
  uint64_t measured = static_cast<uint64_t>((static_cast<uint128>(ns - start_ns) << 32) / ticks);
  if (current.scale == 0 || measured == 0) return ClockLine{tsc, ns, measured};
  uint64_t predicted = line_ns(current, tsc);
  int64_t error = static_cast<int64_t>(ns - predicted);  // > 0: the line runs behind the wall clock
  // The clock was set: follow it at once, at the line's own rate (the measured one spans the
  // step: an hour set forward within 20 ms would read as a rate 180 000 times too fast).
  if (error > kMaxSlewNs || error < -kMaxSlewNs) return ClockLine{tsc, ns, current.scale};
  // Reach the wall clock again after one more interval as long as this one: the slope is the
  // rate plus error/ticks, kept within half and twice the measured rate (never flat). The rate
  // is the one just measured, unless the error is far beyond the measurement's noise: then the
  // wall clock was slewed or stepped within the interval, the measured rate carries that step,
  // and the line's own rate is the better estimate (NTP never changes the rate by 0.1 %).
  uint64_t rate = (error > kNoiseNs || error < -kNoiseNs) ? current.scale : measured;
  int128 correction = (static_cast<int128>(error) << 32) / static_cast<int128>(ticks);
  int128 scale = static_cast<int128>(rate) + correction;
  int128 low = measured / 2;
  int128 high = static_cast<int128>(measured) * 2;
  if (scale < low) scale = low;
  if (scale > high) scale = high;
  return ClockLine{tsc, predicted, static_cast<uint64_t>(scale)};
}

}  // namespace hangshim::shim
