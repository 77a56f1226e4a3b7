// Stragglers: a rank that is slow but not stopped (a throttled GPU, a slow data loader, a noisy
// neighbour) makes every collective wait for it. For each communicator, the collectives every
// member completed (the newest in each ledger's history, 128 calls) are compared one by one: who arrived
// last, and how much later than the median member.
//
// Clocks. When every member runs on one host, their issue times come from one clock: arrival
// is the issue time. Across hosts clocks differ, by more than the lateness looked for, so issue
// times are not compared: each rank's own wait (completion minus issue, both on its clock) is.
// A collective completes at about the same moment everywhere, so who waited least arrived last,
// and a member's lateness is the median member's wait minus its own.
//
// Noise must not pick a rank: with N equally fast members each is last about 1/N of the time.
// A straggler is last at least half of the time, far more often than chance would make it (a
// binomial z-score of at least 4 over at least 16 collectives), and at least 1 ms late at the median.
#include "report/analysis/stragglers.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "ledger/format.h"

namespace hangshim::report {

namespace {

constexpr size_t kMinCompared = 16;
constexpr double kMinShare = 0.5;
constexpr double kMinZ = 4.0;
constexpr uint64_t kMinLateNs = 1000000;
constexpr size_t kRunEnds = 8;  // this many collectives in a row not last end a run of lateness

bool counts_as_collective(const CallTiming& t) {
  auto op = static_cast<ledger::Op>(t.op);
  return t.seq != 0 && ledger::is_collective(op);
}

uint64_t median_of(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return static_cast<uint64_t>(std::max<int64_t>(0, *mid));
}

uint64_t quantile_of(std::vector<int64_t> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = std::min(v.size() - 1, static_cast<size_t>(std::ceil(q * static_cast<double>(v.size()))) - 1);
  return static_cast<uint64_t>(std::max<int64_t>(0, v[i]));
}

std::string op_text(const CallTiming& t) {
  ledger::CallRecord r{};
  r.op = t.op;
  r.flags = t.flags;
  return display_op(r);
}

void find_in_comm(const Analysis& a, int comm, std::vector<Straggler>& out) {
  const CommGroup& g = a.groups[static_cast<size_t>(comm)];
  size_t n = g.members.size();
  if (n < 2) return;
  // Each member's collectives on this communicator, by sequence number (pointers into the
  // views' histories: 8 bytes per call, so 8192 ranks cost megabytes, not tens of them).
  std::vector<std::vector<const CallTiming*>> calls(n);
  bool one_host = true;
  auto by_seq = [](const CallTiming* x, const CallTiming* y) { return x->seq < y->seq; };
  for (size_t m = 0; m < n; ++m) {
    const RankView& v = a.in.ranks[g.members[m].view];
    // An unknown host (a Flight Recorder dump names none) is not this host: clocks may differ.
    one_host = one_host && !v.header.host.empty() && v.header.host == a.in.ranks[g.members[0].view].header.host;
    uint32_t id = g.members[m].info != nullptr ? g.members[m].info->id : 0;  // this communicator in that ledger
    for (const CallTiming& t : v.history) {
      if (counts_as_collective(t) && t.comm == id && id != 0) calls[m].push_back(&t);
    }
    std::stable_sort(calls[m].begin(), calls[m].end(), by_seq);  // in ring order already, unless damaged
    calls[m].erase(std::unique(calls[m].begin(), calls[m].end(), [](auto* x, auto* y) { return x->seq == y->seq; }),
                   calls[m].end());
  }
  // The collectives every member has: member 0's, intersected with each other member's.
  std::vector<uint64_t> seqs;
  for (const CallTiming* t : calls[0]) seqs.push_back(t->seq);
  for (size_t m = 1; m < n && !seqs.empty(); ++m) {
    std::vector<uint64_t> both;
    size_t j = 0;
    for (uint64_t seq : seqs) {
      while (j < calls[m].size() && calls[m][j]->seq < seq) ++j;
      if (j < calls[m].size() && calls[m][j]->seq == seq) both.push_back(seq);
    }
    seqs = std::move(both);
  }
  if (seqs.size() < kMinCompared) return;
  // Each member's calls lined up with `seqs` (one merge pass each).
  for (size_t m = 0; m < n; ++m) {
    std::vector<const CallTiming*> lined;
    lined.reserve(seqs.size());
    size_t j = 0;
    for (uint64_t seq : seqs) {
      while (calls[m][j]->seq < seq) ++j;  // every seq is in every member's list
      lined.push_back(calls[m][j]);
    }
    calls[m] = std::move(lined);
  }
  auto at = [&](size_t m, size_t k) -> const CallTiming& { return *calls[m][k]; };

  // Per collective: each member's lateness (later than the median member, in ns) and who was last.
  std::vector<std::vector<int64_t>> late(n, std::vector<int64_t>(seqs.size()));
  std::vector<size_t> last_of(seqs.size());
  std::vector<int64_t> arrival(n);
  for (size_t k = 0; k < seqs.size(); ++k) {
    for (size_t m = 0; m < n; ++m) {
      const CallTiming& t = at(m, k);
      // By wait times a later arrival is a shorter wait: negate, so larger is later either way.
      // Clamped to 2^62 so that differences of hostile values cannot overflow.
      constexpr uint64_t kCap = uint64_t{1} << 62;
      arrival[m] = one_host ? static_cast<int64_t>(std::min(t.issued_ns, kCap)) : -static_cast<int64_t>(t.wait_ns());
    }
    std::vector<int64_t> sorted = arrival;
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(n / 2), sorted.end());
    int64_t median = sorted[n / 2];
    size_t last = 0;
    for (size_t m = 0; m < n; ++m) {
      late[m][k] = arrival[m] - median;
      if (arrival[m] > arrival[last]) last = m;
    }
    last_of[k] = last;
  }

  double expected = 1.0 / static_cast<double>(n);
  double spread = std::sqrt(static_cast<double>(seqs.size()) * expected * (1 - expected));
  for (size_t m = 0; m < n; ++m) {
    size_t last_count = static_cast<size_t>(std::count(last_of.begin(), last_of.end(), m));
    double share = static_cast<double>(last_count) / static_cast<double>(seqs.size());
    double z = (static_cast<double>(last_count) - static_cast<double>(seqs.size()) * expected) / spread;
    if (share < kMinShare || z < kMinZ || median_of(late[m]) < kMinLateNs) continue;
    // Since when: after the last run of kRunEnds collectives in a row at which it was not last.
    size_t since = 0, run = 0;
    for (size_t k = 0; k < seqs.size(); ++k) {
      run = last_of[k] == m ? 0 : run + 1;
      if (run >= kRunEnds) since = k + 1;
    }
    while (since < seqs.size() && last_of[since] != m) ++since;
    if (since >= seqs.size()) continue;  // lateness that ended: no straggler now
    Straggler s;
    s.rank = a.rank(g.members[m].view);
    s.comm = comm;
    s.compared = seqs.size();
    s.last = last_count;
    s.since_seq = seqs[since];
    s.since_oldest = since == 0;
    s.since_ns = at(m, since).issued_ns;
    std::vector<int64_t> recent(late[m].begin() + static_cast<std::ptrdiff_t>(since), late[m].end());
    s.median_late_ns = median_of(recent);
    s.p95_late_ns = quantile_of(recent, 0.95);
    s.by_timestamps = one_host;
    // The collective and line it is most often last at.
    std::map<std::pair<std::string, uint32_t>, size_t> where;
    for (size_t k = since; k < seqs.size(); ++k) {
      if (last_of[k] != m) continue;
      const CallTiming& t = at(m, k);
      ++where[{op_text(t), t.callsite}];
    }
    auto top = std::max_element(where.begin(), where.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
    if (top != where.end()) {
      s.op = top->first.first;
      ledger::CallRecord r{};
      r.callsite = top->first.second;
      s.site = a.site(g.members[m].view, r);
    }
    out.push_back(std::move(s));
  }
}

}  // namespace

std::vector<Straggler> find_stragglers(const Analysis& a) {
  std::vector<Straggler> out;
  for (size_t c = 0; c < a.groups.size(); ++c) find_in_comm(a, static_cast<int>(c), out);
  // The worst first: the most often last, then the latest.
  std::stable_sort(out.begin(), out.end(), [](const Straggler& x, const Straggler& y) {
    double sx = static_cast<double>(x.last) / static_cast<double>(x.compared);
    double sy = static_cast<double>(y.last) / static_cast<double>(y.compared);
    return sx != sy ? sx > sy : x.median_late_ns > y.median_late_ns;
  });
  return out;
}

}  // namespace hangshim::report
