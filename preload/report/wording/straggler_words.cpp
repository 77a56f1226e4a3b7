#include "report/wording/straggler_words.h"

#include <fmt/format.h>

#include "report/wording/phrases.h"
#include "report/wording/state_words.h"

namespace hangshim::report {

namespace {

std::string percent(uint64_t part, uint64_t whole) {
  return whole == 0 ? "0" : fmt::format("{:.0f}", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

}  // namespace

std::string straggler_clause(const Diagnosis& d, const Straggler& s) {
  (void)d;
  std::string what = s.op.empty() ? "the collectives" : s.op + " calls";
  std::string at = s.site ? " at " + short_site(*s.site) : "";
  return fmt::format("rank {} is the straggler: last to arrive at {} % of {}{}, {} later than the median rank", s.rank,
                     percent(s.last, s.compared), what, at, duration_text(s.median_late_ns));
}

std::string straggler_text(const Diagnosis& d, const Straggler& s) {
  std::string since = s.since_oldest ? fmt::format("since at least {} #{}, the oldest compared", s.op.empty() ? "collective" : s.op,
                                                   s.since_seq)
                                     : fmt::format("since {} #{}", s.op.empty() ? "collective" : s.op, s.since_seq);
  if (d.now_ns > s.since_ns && s.since_ns != 0) since += fmt::format(" ({} ago)", state_words::format_age(d.now_ns - s.since_ns));
  std::string out = fmt::format("{} on {} (p95 {}), {}; {} of the newest {} collectives every member completed, compared by {}",
                                straggler_clause(d, s), comm_label(d, s.comm), duration_text(s.p95_late_ns), since, s.last,
                                s.compared,
                                s.by_timestamps ? "issue times (all members on one host, one clock)"
                                                : "each rank's own wait times (members on several hosts: clock-independent)");
  if (s.spends_at) {
    out += fmt::format("; it spends the time at {} in {} ({} of {} samples of its stack outside NCCL)", short_site(*s.spends_at),
                       s.spends_at->function, s.spends_samples, s.samples);
  }
  return out;
}

}  // namespace hangshim::report
