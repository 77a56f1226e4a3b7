// What a view keeps of a ledger's records (report/inputs/rank_view.cpp: keep_records,
// keep_history), against the rule written out the plain way: the simulated calls dropped; the
// newest `history` completed calls that ran, oldest first; and every pending call, the newest
// `max_records`, and the newest call of each (call-site, communicator), in their order. Random
// ledgers of a few call-sites and communicators, with pending, failed, captured and simulated
// calls and damaged times.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "ledger/format.h"
#include "report/inputs/inputs.h"

namespace {

using hangshim::ledger::CallRecord;
using hangshim::report::CallTiming;
using hangshim::report::ViewOptions;

struct Kept {
  std::vector<CallRecord> records;
  std::vector<CallTiming> timings;
};

// The rule, step by step (each call-site's newest found by looking at every later record).
Kept by_the_rule(std::vector<CallRecord> records, const ViewOptions& options) {
  std::erase_if(records, [](const CallRecord& r) { return (r.flags & hangshim::ledger::kRecordSimulated) != 0; });
  Kept out;
  for (size_t i = records.size(); i-- > 0 && out.timings.size() < options.history;) {
    const CallRecord& r = records[i];
    bool ok = r.result == 0 || r.result == 7;
    if (r.completed_ns == 0 || r.completed_ns < r.issued_ns || !ok || (r.flags & hangshim::ledger::kRecordCaptured) != 0) continue;
    uint64_t wait_us = std::min<uint64_t>((r.completed_ns - r.issued_ns) / 1000, UINT32_MAX);
    out.timings.push_back({r.seq, r.issued_ns, static_cast<uint32_t>(wait_us), r.comm, r.callsite, r.op, r.flags});
  }
  std::reverse(out.timings.begin(), out.timings.end());
  size_t n = records.size();
  for (size_t i = 0; i < n; ++i) {
    const CallRecord& r = records[i];
    bool newest_of_site = r.callsite != 0;
    for (size_t j = i + 1; j < n && newest_of_site; ++j) {
      newest_of_site = !(records[j].callsite == r.callsite && records[j].comm == r.comm);
    }
    if (i + options.max_records >= n || r.completed_ns == 0 || newest_of_site) out.records.push_back(r);
  }
  return out;
}

std::vector<CallRecord> random_records(std::mt19937_64& random, size_t n) {
  std::vector<CallRecord> out(n);
  uint64_t now = 1'700'000'000'000'000'000ull;
  for (size_t i = 0; i < n; ++i) {
    CallRecord& r = out[i];
    r.index = i + 1;
    r.op = static_cast<uint8_t>(1 + random() % 5);
    r.comm = static_cast<uint32_t>(random() % 3);          // 0: none
    r.callsite = static_cast<uint32_t>(random() % 5);      // 0: none
    r.seq = i;
    now += random() % 3'000'000;
    r.issued_ns = now;
    r.result = random() % 10 == 0 ? static_cast<int32_t>(random() % 8) : 0;
    switch (random() % 12) {
      case 0: r.completed_ns = 0; break;                                 // pending
      case 1: r.completed_ns = now - 1; break;                           // completed before issued: damage
      case 2: r.completed_ns = now + (uint64_t{1} << 60); break;         // a wait past 32 bits of µs
      default: r.completed_ns = now + random() % 5'000'000; break;
    }
    if (random() % 15 == 0) r.flags |= hangshim::ledger::kRecordSimulated;
    if (random() % 15 == 0) r.flags |= hangshim::ledger::kRecordCaptured;
    if (random() % 9 == 0) r.flags |= hangshim::ledger::kRecordBarrier;
  }
  return out;
}

bool same_record(const CallRecord& a, const CallRecord& b) {
  return a.index == b.index && a.seq == b.seq && a.comm == b.comm && a.callsite == b.callsite &&
         a.completed_ns == b.completed_ns && a.flags == b.flags;
}

bool same_timing(const CallTiming& a, const CallTiming& b) {
  return a.seq == b.seq && a.issued_ns == b.issued_ns && a.wait_us == b.wait_us && a.comm == b.comm &&
         a.callsite == b.callsite && a.op == b.op && a.flags == b.flags;
}

}  // namespace

TEST_CASE("report inputs: a view keeps the pending calls, the newest, each call-site's newest and the newest timings") {
  std::mt19937_64 random(42);
  const ViewOptions shapes[] = {{16, 128}, {1, 3}, {4, 500}, {300, 1}};
  for (int round = 0; round < 400; ++round) {
    const ViewOptions& options = shapes[round % 4];
    size_t n = round < 8 ? static_cast<size_t>(round) : random() % 300;
    std::vector<CallRecord> records = random_records(random, n);
    INFO("round " << round << ", " << n << " records, max_records " << options.max_records << ", history " << options.history);
    Kept expected = by_the_rule(records, options);

    hangshim::ledger::Ledger ledger;
    ledger.records = records;
    hangshim::report::RankView view;
    hangshim::report::PreparedRank prepared;
    hangshim::report::prepare_rank_view(std::move(ledger), options, view, prepared);

    REQUIRE(prepared.records.size() == expected.records.size());
    for (size_t i = 0; i < expected.records.size(); ++i) CHECK(same_record(prepared.records[i], expected.records[i]));
    std::vector<CallTiming> timings(prepared.history.begin(), prepared.history.end());
    REQUIRE(timings.size() == expected.timings.size());
    for (size_t i = 0; i < expected.timings.size(); ++i) CHECK(same_timing(timings[i], expected.timings[i]));
  }
}
