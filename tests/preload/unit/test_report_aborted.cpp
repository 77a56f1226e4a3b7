// Classifier: a watchdog that aborted the communicator of a pending collective (ncclCommAbort, as
// PyTorch's NCCL watchdog does on a timeout). The verdict is "aborted" and names who aborted which
// communicator after which collective, how long it had been pending, and the hang it ended: the
// verdict the same ledgers give without the abort.
#include <doctest/doctest.h>

#include "report_test_util.h"

using namespace report_test;
using hangshim::ledger::CommState;

namespace {

constexpr uint64_t kSecond = 1'000'000'000ull;

// Rank `r` aborts its world communicator at `at_ns` (the record of ncclCommAbort, returned
// unless `inside`), as a watchdog thread does while the main thread waits.
void abort_world(synth::Rank& r, uint64_t at_ns, bool inside = false) {
  synth::Call abort;
  abort.op = Op::CommAbort;
  abort.site = -1;
  abort.issued_ns = at_ns;
  abort.complete = !inside;
  r.calls.push_back(abort);
  if (!inside) r.comms[0].state = CommState::Aborted;
}

// Every rank's heartbeat at the same time: nobody is judged dead by it.
void same_heartbeats(Job& job) {
  for (auto& r : job.ranks) r.heartbeat_ns = kStart + 4 * kSecond;
}

// The verdict, checked to be an abort that knows its abort.
const Finding& aborted_verdict(const Diagnosis& d) {
  const Finding& f = verdict_of(d);
  CHECK(f.kind == Kind::Aborted);
  REQUIRE(f.abort);
  return f;
}

bool has(const std::string& text, const std::string& part) {
  INFO(text);
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("report: a rank skipped all_reduce #3, the others' watchdog aborted the world: aborted, after that hang") {
  for (int world : {2, 4}) {
    CAPTURE(world);
    auto build = [&](bool with_abort) {
      Job job(world);
      for (int r = 0; r < world; ++r) {
        steps(job[r], 0, r == 1 ? 2 : 3, r != 1);
        if (r != 1) job[r].calls.back().issued_ns = kStart + 1 * kSecond;  // #3 issued at 1 s ...
        if (r != 1 && with_abort) abort_world(job[r], kStart + 3 * kSecond);  // ... aborted at 3 s
      }
      same_heartbeats(job);
      return job;
    };
    Job plain = build(false);
    Diagnosis before = plain.diagnose();
    const Finding& hang = verdict_of(before);
    Job aborted = build(true);
    Diagnosis d = aborted.diagnose();
    REQUIRE(d.problem);
    CHECK(d.verdict == Kind::Aborted);
    const Finding& f = verdict_of(d);
    REQUIRE(f.abort);
    // The hang is what the same ledgers say without the abort.
    CHECK(f.abort->hang == hang.kind);
    CHECK(f.culprits == hang.culprits);
    CHECK(f.seq == 3);
    std::vector<int> others;
    for (int r = 0; r < world; ++r) {
      if (r != 1) others.push_back(r);
    }
    CHECK(f.abort->ranks == others);
    CHECK(f.abort->not_reached == std::vector<int>{1});
    CHECK(f.abort->issued == others);
    CHECK(f.abort->pending_ns == 2 * kSecond);
    REQUIRE(f.abort->call);
    CHECK(f.abort->call->iteration == 3);
    std::string line = verdict_line(d);
    CHECK(has(line, "ABORTED: " + std::string(world == 2 ? "rank 0" : "ranks 0,2-3") + " aborted comm world"));
    CHECK(has(line, "all_reduce #3 at train.py:88 (iteration 3) had been pending for 2.0 s"));
    CHECK(has(line, "rank 1 never issued it: rank 1 is outside NCCL since all_reduce #2"));
    REQUIRE_FALSE(d.hints.empty());
    CHECK(has(d.hints[0], "the communicator was aborted while all_reduce #3 was pending"));
    CHECK(d.hints.size() > 1);  // ... and the advice about the hang itself
  }
}

TEST_CASE("report: every rank issued #5, none completed it, the watchdog aborted it (the GPU check's job)") {
  Job job(1);
  steps(job[0], 0, 5, true);
  job[0].calls.back().issued_ns = kStart + 1 * kSecond;
  abort_world(job[0], kStart + 2 * kSecond);
  Diagnosis d = job.diagnose();
  const Finding& f = aborted_verdict(d);
  CHECK(f.abort->hang == Kind::Transport);
  CHECK(f.abort->not_reached.empty());
  std::string line = verdict_line(d);
  CHECK(has(line, "ABORTED: rank 0 aborted comm world (1 ranks)"));
  CHECK(has(line, "all_reduce #5 at train.py:88 (iteration 5) had been pending for 1.0 s"));
  CHECK(has(line, "every rank had issued it and none completed it"));
}

TEST_CASE("report: the stand-in's shape: the aborted call returned its error after the abort") {
  Job job(2);
  steps(job[0], 0, 3);
  steps(job[1], 0, 2);
  job[0].calls.back().issued_ns = kStart + 1 * kSecond;
  job[0].calls.back().result = 5;  // ncclInvalidUsage: "the communicator was aborted"
  job[0].calls.back().wait_ns = 3 * kSecond;  // returned after the abort below
  abort_world(job[0], kStart + 2 * kSecond);
  same_heartbeats(job);
  Diagnosis d = job.diagnose();
  const Finding& f = aborted_verdict(d);
  CHECK(f.abort->ranks == std::vector<int>{0});
  CHECK(f.abort->not_reached == std::vector<int>{1});
  CHECK(f.abort->pending_ns == 1 * kSecond);
  CHECK(has(verdict_line(d), "all_reduce #3 at train.py:88 (iteration 3) had been pending for 1.0 s"));
}

TEST_CASE("report: a rank still inside ncclCommAbort") {
  Job job(2);
  for (int r = 0; r < 2; ++r) steps(job[r], 0, 4, true);
  for (int r = 0; r < 2; ++r) abort_world(job[r], kStart + 2 * kSecond, /*inside=*/r == 1);
  same_heartbeats(job);
  Diagnosis d = job.diagnose();
  const Finding& f = aborted_verdict(d);
  CHECK(f.abort->ranks == std::vector<int>{0, 1});
  CHECK(f.abort->inside == std::vector<int>{1});
  CHECK(has(verdict_line(d), "ABORTED: ranks 0-1 aborted comm world"));
  CHECK(has(finding_lines(d, f).back(), "had issued #4: 0-1; had not: none"));
}

TEST_CASE("report: aborts that end no hang are not an aborted verdict") {
  SUBCASE("every collective completed, then the ranks aborted (destroy_process_group in some PyTorch versions)") {
    Job job(2);
    for (int r = 0; r < 2; ++r) {
      steps(job[r], 0, 6);
      abort_world(job[r], kStart + 2 * kSecond);
      job[r].state = hangshim::ledger::ProcessState::Exited;
    }
    Diagnosis d = job.diagnose();
    CHECK_FALSE(d.problem);
    CHECK(d.verdict == Kind::Healthy);
  }
  SUBCASE("the rank that aborted never reached the pending collective: it left, the others hang") {
    auto build = [](bool with_abort) {
      Job job(2);
      steps(job[0], 0, 3, true);
      steps(job[1], 0, 2);
      if (with_abort) abort_world(job[1], kStart + 2 * kSecond);
      same_heartbeats(job);
      return job;
    };
    Job plain = build(false);
    Diagnosis before = plain.diagnose();
    Job left = build(true);
    Diagnosis d = left.diagnose();
    CHECK(d.verdict == before.verdict);
    CHECK(d.verdict != Kind::Aborted);
  }
}

TEST_CASE("report: NCCL's asynchronous error is named with the abort") {
  Job job(2);
  for (int r = 0; r < 2; ++r) steps(job[r], 0, 4, true);
  abort_world(job[0], kStart + 2 * kSecond);
  job[1].comms[0].async_error = 6;  // ncclRemoteError
  same_heartbeats(job);
  Diagnosis d = job.diagnose();
  const Finding& f = aborted_verdict(d);
  REQUIRE(f.abort->async_errors.size() == 1);
  CHECK(f.abort->async_errors[0].ranks == std::vector<int>{1});
  CHECK(has(verdict_line(d), "NCCL reported an asynchronous error: ncclRemoteError on rank 1"));
}

TEST_CASE("report: the abort known only from the communicator's state (its record left the ring)") {
  Job job(2);
  for (int r = 0; r < 2; ++r) steps(job[r], 0, 4, true);
  job[0].comms[0].state = CommState::Aborted;  // no ncclCommAbort record, no end time
  same_heartbeats(job);
  Diagnosis d = job.diagnose();
  const Finding& f = aborted_verdict(d);
  CHECK(f.abort->ranks == std::vector<int>{0});
  CHECK(f.abort->pending_ns == 0);  // when: unknown, and not guessed
  CHECK(has(verdict_line(d), "after all_reduce #4 at train.py:88 (iteration 4) was pending; every rank had issued it"));
}

TEST_CASE("report: an abort where some members' ledgers are not here blames nobody it cannot see") {
  Job job(4);
  job.ranks.resize(2);  // ranks 2 and 3: another node, not collected
  for (int r = 0; r < 2; ++r) {
    steps(job[r], 0, 4, true);
    abort_world(job[r], kStart + 2 * kSecond);
  }
  same_heartbeats(job);
  Diagnosis d = job.diagnose();
  const Finding& f = verdict_of(d);
  CHECK(f.kind == Kind::Aborted);
  std::string line = verdict_line(d);
  CHECK(has(line, "ranks 0-1 had issued it and none completed it; the communicator's rank(s) 2-3 have no ledger here"));
  CHECK_FALSE(has(line, "every rank had issued it"));
}
