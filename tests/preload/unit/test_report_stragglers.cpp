// Stragglers (report/analysis/stragglers.cpp) on synthetic ledgers written by the real writer,
// with issue and completion times set per call: one slow rank is named with its lateness and
// since when; clocks that differ across hosts do not make fake stragglers; equally fast ranks
// with noise give none.
#include <doctest/doctest.h>

#include <random>

#include "report/wording/render.h"
#include "report/wording/straggler_words.h"
#include "report_test_util.h"

using namespace report_test;

namespace {

constexpr uint64_t kMs = 1000000;

// `steps` all_reduces from train.py:88 on every rank of `job`. Step k starts at k x 100 ms; rank
// r issues it after `delay(r, k)` ms; it completes on every rank when the last one issued it
// (plus 1 ms), each rank's clock shifted by `offset(r)` (0: one host).
template <class Delay, class Offset>
void timed_steps(Job& job, int steps, Delay delay, Offset offset) {
  int world = static_cast<int>(job.ranks.size());
  for (int k = 0; k < steps; ++k) {
    uint64_t start = kStart + 1000 * kMs + static_cast<uint64_t>(k) * 100 * kMs;
    std::vector<uint64_t> issued(static_cast<size_t>(world));
    uint64_t last = 0;
    for (int r = 0; r < world; ++r) {
      issued[static_cast<size_t>(r)] = start + static_cast<uint64_t>(delay(r, k) * static_cast<double>(kMs));
      last = std::max(last, issued[static_cast<size_t>(r)]);
    }
    for (int r = 0; r < world; ++r) {
      synth::Call c;
      c.site = 0;
      c.issued_ns = issued[static_cast<size_t>(r)] + offset(r);
      c.wait_ns = last + kMs - issued[static_cast<size_t>(r)];
      job[r].calls.push_back(c);
    }
  }
}

auto no_offset = [](int) { return uint64_t{0}; };

}  // namespace

TEST_CASE("report stragglers: one slow rank among 4 on one host is named, by issue times") {
  Job job(4);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> jitter(0, 5);
  timed_steps(job, 40, [&](int r, int) { return jitter(rng) + (r == 2 ? 30.0 : 0.0); }, no_offset);
  for (int r = 0; r < 4; ++r) job[r].state = hangshim::ledger::ProcessState::Exited;
  Diagnosis d = job.diagnose();
  REQUIRE(d.stragglers.size() == 1);
  const Straggler& s = d.stragglers[0];
  CHECK(s.rank == 2);
  CHECK(s.op == "all_reduce");
  REQUIRE(s.site);
  CHECK(s.site->line == 88);
  CHECK(s.compared == 40);
  CHECK(s.last == 40);
  CHECK(s.by_timestamps);
  CHECK(s.since_oldest);
  CHECK(s.since_seq == 1);
  CHECK(s.median_late_ns >= 25 * kMs);
  CHECK(s.median_late_ns <= 35 * kMs);
  CHECK(s.p95_late_ns >= s.median_late_ns);
  CHECK(verdict_line(d).find("rank 2 is the straggler: last to arrive at 100 % of all_reduce calls at train.py:88") !=
        std::string::npos);
  CHECK(straggler_text(d, s).find("compared by issue times") != std::string::npos);
}

TEST_CASE("report stragglers: across hosts each rank's own wait is compared, not clocks that differ") {
  Job job(4);
  for (int r = 2; r < 4; ++r) job[r].host = "synth-node-b";
  std::mt19937 rng(8);
  std::uniform_real_distribution<double> jitter(0, 5);
  // node-b's clock runs 3 s ahead: by issue times ranks 2-3 would always look last.
  timed_steps(job, 40, [&](int r, int) { return jitter(rng) + (r == 1 ? 20.0 : 0.0); },
              [](int r) { return r >= 2 ? 3000 * kMs : uint64_t{0}; });
  Diagnosis d = job.diagnose();
  REQUIRE(d.stragglers.size() == 1);
  CHECK(d.stragglers[0].rank == 1);
  CHECK_FALSE(d.stragglers[0].by_timestamps);
  CHECK(d.stragglers[0].median_late_ns >= 15 * kMs);
  CHECK(straggler_text(d, d.stragglers[0]).find("clock-independent") != std::string::npos);
}

TEST_CASE("report stragglers: since when, after the last run of collectives it was not last at") {
  Job job(4);
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> jitter(0, 5);
  // Rank 3 is the first to arrive until step 20, then 30 ms late.
  timed_steps(job, 60, [&](int r, int k) { return r != 3 ? 1 + jitter(rng) : k < 20 ? 0.0 : 30.0; }, no_offset);
  Diagnosis d = job.diagnose();
  REQUIRE(d.stragglers.size() == 1);
  CHECK(d.stragglers[0].rank == 3);
  CHECK_FALSE(d.stragglers[0].since_oldest);
  CHECK(d.stragglers[0].since_seq == 21);  // collective #21 is step 20's
  CHECK(d.stragglers[0].median_late_ns >= 20 * kMs);  // over the run, not diluted by the fast steps
}

TEST_CASE("report stragglers: equally fast ranks with noise give none") {
  for (int world : {2, 4, 8}) {
    for (unsigned seed = 1; seed <= 10; ++seed) {
      CAPTURE(world);
      CAPTURE(seed);
      Job job(world);
      std::mt19937 rng(seed);
      std::uniform_real_distribution<double> jitter(0, 10);
      timed_steps(job, 100, [&](int, int) { return jitter(rng); }, no_offset);
      Diagnosis d = job.diagnose();
      CHECK(d.stragglers.empty());
    }
  }
}

TEST_CASE("report stragglers: too few collectives, or a lateness under 1 ms, are no finding") {
  Job few(4);
  timed_steps(few, 10, [](int r, int) { return r == 1 ? 30.0 : 0.0; }, no_offset);
  CHECK(few.diagnose().stragglers.empty());
  Job tiny(4);
  timed_steps(tiny, 40, [](int r, int) { return r == 1 ? 0.2 : 0.0; }, no_offset);
  CHECK(tiny.diagnose().stragglers.empty());
}

TEST_CASE("report stragglers: a rank seconds late is named with its lateness, by issue times and by waits") {
  // 3 s late: more than 32-bit offsets hold (2.1 s), so the arrivals are kept whole.
  for (bool one_host : {true, false}) {
    Job job(8);
    if (!one_host) {
      for (int r = 4; r < 8; ++r) job[r].host = "synth-node-b";
    }
    std::mt19937 rng(10);
    std::uniform_real_distribution<double> jitter(0, 5);
    timed_steps(job, 40, [&](int r, int) { return jitter(rng) + (r == 5 ? 3000.0 : 0.0); },
                [&](int r) { return !one_host && r >= 4 ? 7000 * kMs : uint64_t{0}; });
    Diagnosis d = job.diagnose();
    REQUIRE(d.stragglers.size() == 1);
    CHECK(d.stragglers[0].rank == 5);
    CHECK(d.stragglers[0].by_timestamps == one_host);
    CHECK(d.stragglers[0].last == 40);
    CHECK(d.stragglers[0].median_late_ns >= 2990 * kMs);
    CHECK(d.stragglers[0].median_late_ns <= 3005 * kMs);
  }
}

TEST_CASE("report stragglers: the same findings on one thread and on several") {
  // Members split among threads (stragglers.cpp): each part notes the collectives its members
  // lack, joined afterwards, and the medians are split by collective. The rank that lacks the
  // newest calls is in the last part on 2, 3 or 4 threads: a note left out of the join shows.
  Job job(37);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> jitter(0, 5);
  timed_steps(job, 60, [&](int r, int) { return jitter(rng) + (r == 29 ? 40.0 : 0.0); }, no_offset);
  job[33].calls.resize(job[33].calls.size() - 5);  // its newest 5 collectives never came: not compared
  Diagnosis one = job.diagnose();
  REQUIRE(one.stragglers.size() == 1);
  CHECK(one.stragglers[0].rank == 29);
  CHECK(one.stragglers[0].compared == 55);
  for (size_t threads : {2, 3, 4}) {
    CAPTURE(threads);
    DiagnoseOptions options;
    options.threads = threads;
    Diagnosis many = job.diagnose(options);
    REQUIRE(many.stragglers.size() == 1);
    const Straggler& a = one.stragglers[0];
    const Straggler& b = many.stragglers[0];
    CHECK(b.rank == a.rank);
    CHECK(b.compared == a.compared);
    CHECK(b.last == a.last);
    CHECK(b.since_seq == a.since_seq);
    CHECK(b.median_late_ns == a.median_late_ns);
    CHECK(b.p95_late_ns == a.p95_late_ns);
    CHECK(render_report_text(many, {}) == render_report_text(one, {}));
  }
  // More threads asked for than there are members: as many parts as members.
  Job small(3);
  timed_steps(small, 40, [&](int r, int) { return jitter(rng) + (r == 1 ? 30.0 : 0.0); }, no_offset);
  Diagnosis alone = small.diagnose();
  DiagnoseOptions eight;
  eight.threads = 8;
  Diagnosis spread = small.diagnose(eight);
  REQUIRE(alone.stragglers.size() == 1);
  REQUIRE(spread.stragglers.size() == 1);
  CHECK(spread.stragglers[0].rank == alone.stragglers[0].rank);
  CHECK(spread.stragglers[0].median_late_ns == alone.stragglers[0].median_late_ns);
  CHECK(render_report_text(spread, {}) == render_report_text(alone, {}));
}

TEST_CASE("report stragglers: ties name nobody, and a lateness of 1 ms at half the collectives is the edge") {
  // Every rank arrives at once: the first of equals is last at every collective, 0 ms late.
  Job ties(8);
  timed_steps(ties, 40, [](int, int) { return 0.0; }, no_offset);
  CHECK(ties.diagnose().stragglers.empty());
  // Rank 1 is last at every collective, 2 ms late at the first `late_at` and 0.1 ms at the
  // rest: its median lateness (the upper median of 40) is 2 ms from 20 such collectives on.
  for (int late_at : {19, 20, 21}) {
    CAPTURE(late_at);
    Job job(8);
    timed_steps(job, 40, [&](int r, int k) { return r != 1 ? 0.0 : k < late_at ? 2.0 : 0.1; }, no_offset);
    for (size_t threads : {1, 2}) {
      DiagnoseOptions options;
      options.threads = threads;
      Diagnosis d = job.diagnose(options);
      if (late_at < 20) {
        CHECK(d.stragglers.empty());
        continue;
      }
      REQUIRE(d.stragglers.size() == 1);
      CHECK(d.stragglers[0].rank == 1);
      CHECK(d.stragglers[0].last == 40);
      CHECK(d.stragglers[0].median_late_ns == 2 * kMs);
    }
  }
}
