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
#include <memory>

#include "ledger/format.h"
#include "report/analysis/split_in_parallel.h"

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

// The kinds of timing that are collectives on communicator `id` (its id in one ledger).
auto collectives_on(uint32_t id) {
  return [id](const CallTiming& kind) { return kind.comm == id && ledger::is_collective(static_cast<ledger::Op>(kind.op)); };
}

// A member's collectives on a communicator (`id` in its ledger), by sequence number, one per
// number (the first of equal numbers in ring order), each kept as `keep(timing)` (anything with
// a `seq`): its view's (encoded) history is in ring order already unless damaged, and only that
// communicator's collectives are unpacked.
template <class Kept, class Keep>
void member_collectives(const RankView& v, uint32_t id, std::vector<Kept>& out, Keep keep) {
  out.clear();
  if (id == 0) return;
  v.history.each(collectives_on(id), [&](const CallTiming& t) {
    if (counts_as_collective(t)) out.push_back(keep(t));
  });
  auto not_before = [](const Kept& x, const Kept& y) { return x.seq >= y.seq; };
  if (std::adjacent_find(out.begin(), out.end(), not_before) == out.end()) return;  // the usual: in order, one each
  std::stable_sort(out.begin(), out.end(), [](const Kept& x, const Kept& y) { return x.seq < y.seq; });
  out.erase(std::unique(out.begin(), out.end(), [](const Kept& x, const Kept& y) { return x.seq == y.seq; }), out.end());
}

// The same, whole timings.
void member_calls(const RankView& v, uint32_t id, std::vector<CallTiming>& out) {
  member_collectives(v, id, out, [](const CallTiming& t) { return t; });
}

// `calls` (sorted, one per number) lined up with `seqs`, every one of which it holds.
void line_up(std::vector<CallTiming>& calls, const std::vector<uint64_t>& seqs) {
  size_t j = 0, out = 0;
  for (uint64_t seq : seqs) {
    while (calls[j].seq < seq) ++j;
    calls[out++] = calls[j];
  }
  calls.resize(out);
}

// Whether a member last at `last` of `compared` collectives among `n` members is last far more
// often than chance would make it.
bool last_too_often(size_t last, size_t compared, size_t n) {
  double expected = 1.0 / static_cast<double>(n);
  double spread = std::sqrt(static_cast<double>(compared) * expected * (1 - expected));
  double share = static_cast<double>(last) / static_cast<double>(compared);
  double z = (static_cast<double>(last) - static_cast<double>(compared) * expected) / spread;
  return share >= kMinShare && z >= kMinZ;
}

// Memory and time grow with members x compared collectives, never with more: with 131 072
// ranks a table of pointers per member, and a lateness row per member, were hundreds of
// megabytes and most of the report's time. Two passes over the members' histories: the first
// keeps only who arrived last at each collective and the earliest arrival there (no table),
// which usually shows that no member can be a straggler: none is last often enough, or the
// arrivals are too close together for anyone's lateness to reach kMinLateNs. Only otherwise does
// the second fill the flat table of arrivals, by collective, for the median member's arrival,
// and a member's lateness is worked out only for the suspects.
void find_in_comm(const Analysis& a, int comm, std::vector<Straggler>& out) {
  const CommGroup& g = a.groups[static_cast<size_t>(comm)];
  size_t n = g.members.size();
  if (n < 2) return;
  auto member_id = [&](size_t m) { return g.members[m].info != nullptr ? g.members[m].info->id : 0; };  // in that ledger
  auto view_of = [&](size_t m) -> const RankView& { return a.in.ranks[g.members[m].view]; };
  // An unknown host (a Flight Recorder dump names none) is not this host: clocks may differ.
  bool one_host = true;
  for (size_t m = 0; m < n && one_host; ++m) {
    const std::string& host = view_of(m).header.host;
    one_host = !host.empty() && host == view_of(0).header.host;
  }
  // A member's arrival at a collective: its issue time on one host; across hosts its wait,
  // negated, so that larger is later either way. Clamped to 2^62 so that differences of hostile
  // values cannot overflow. Picked as member_calls picks its calls, without copying whole timings.
  struct Arrival {
    uint64_t seq;
    int64_t at;
  };
  auto member_arrivals = [&](size_t m, std::vector<Arrival>& arrivals) {
    member_collectives(view_of(m), member_id(m), arrivals, [&](const CallTiming& t) {
      constexpr uint64_t kCap = uint64_t{1} << 62;
      return Arrival{t.seq, one_host ? static_cast<int64_t>(std::min(t.issued_ns, kCap)) : -static_cast<int64_t>(t.wait_ns())};
    });
  };
  // The collectives every member has: member 0's, less those another member lacks (found as
  // the members are walked; dropped at the end of the pass).
  std::vector<uint64_t> seqs;
  {
    std::vector<Arrival> first;
    member_arrivals(0, first);
    for (const Arrival& t : first) seqs.push_back(t.seq);
  }
  if (seqs.size() < kMinCompared) return;
  // Walks the members [begin, end) of a part in blocks of kBlock, each member's history decoded
  // once: its arrival at each collective of `seqs` not yet crossed out of `everywhere` is handed
  // to put(k, member, place in its block, at); a collective it lacks is crossed out. block_done
  // (first member, width) after each block. False once too few collectives are left to compare.
  constexpr size_t kBlock = 64;
  auto walk = [&](size_t begin, size_t end, std::vector<char>& everywhere, auto&& put, auto&& block_done) {
    size_t compared = static_cast<size_t>(std::count(everywhere.begin(), everywhere.end(), 1));
    std::vector<Arrival> arrivals;
    for (size_t m0 = begin; m0 < end; m0 += kBlock) {
      size_t width = std::min(kBlock, end - m0);
      for (size_t b = 0; b < width; ++b) {
        member_arrivals(m0 + b, arrivals);
        size_t j = 0;
        for (size_t k = 0; k < seqs.size(); ++k) {
          if (!everywhere[k]) continue;
          while (j < arrivals.size() && arrivals[j].seq < seqs[k]) ++j;
          if (j == arrivals.size() || arrivals[j].seq != seqs[k]) {
            everywhere[k] = 0;
            if (--compared < kMinCompared) return false;  // too few left to compare: nothing to find
            continue;
          }
          put(k, m0 + b, b, arrivals[j].at);
        }
      }
      block_done(m0, width);
    }
    return true;
  };

  // The first pass: who was last at each collective (the first of equals), and the earliest
  // arrival there; the members split among the threads, each part with its own note of these
  // and of the collectives its members lack, joined after in part order (so the first of equals
  // wins there too).
  struct Latest {
    int64_t at = INT64_MIN;
    size_t member = 0;
    int64_t earliest = INT64_MAX;
  };
  size_t parts = split_parts(n, a.threads_for(n, 8192));
  std::vector<std::vector<char>> found(parts);      // per part: the collectives all its members have
  std::vector<std::vector<Latest>> latest(parts);  // per part: its latest member at each
  split_in_parallel(n, parts, [&](size_t part, size_t begin, size_t end) {
    found[part].assign(seqs.size(), 1);
    latest[part].assign(seqs.size(), Latest{});
    std::vector<Latest>& mine = latest[part];
    walk(
        begin, end, found[part],
        [&](size_t k, size_t m, size_t, int64_t at) {
          Latest& here = mine[k];
          if (at > here.at) {
            here.at = at;
            here.member = m;
          }
          here.earliest = std::min(here.earliest, at);
        },
        [](size_t, size_t) {});
  });
  std::vector<size_t> last_of;  // by collective compared
  size_t spread_out = 0;        // collectives whose last arrival was kMinLateNs or more after the first
  {
    std::vector<uint64_t> kept;
    for (size_t k = 0; k < seqs.size(); ++k) {
      bool everywhere = true;
      Latest last;
      for (size_t part = 0; part < parts; ++part) {
        everywhere = everywhere && found[part][k];
        const Latest& theirs = latest[part][k];
        if (theirs.at > last.at) {
          last.at = theirs.at;
          last.member = theirs.member;
        }
        last.earliest = std::min(last.earliest, theirs.earliest);
      }
      if (!everywhere) continue;
      kept.push_back(seqs[k]);
      last_of.push_back(last.member);
      if (last.at - last.earliest >= static_cast<int64_t>(kMinLateNs)) ++spread_out;
    }
    seqs = std::move(kept);
  }
  size_t compared = seqs.size();
  if (compared < kMinCompared) return;
  std::vector<size_t> last_count(n, 0);
  for (size_t k = 0; k < compared; ++k) ++last_count[last_of[k]];
  // A member's lateness at a collective is at most the time from its first to its last
  // arrival: unless that was kMinLateNs or more at half the collectives, no member's median
  // lateness can be (how median_of picks: the upper median).
  bool suspects = spread_out >= compared - compared / 2 &&
                  std::any_of(last_count.begin(), last_count.end(), [&](size_t last) { return last_too_often(last, compared, n); });
  if (!suspects) return;

  // The second pass: the arrivals as one flat table, by collective: arrival[k * n + m]. Every
  // value kept is written (every member has every collective left): the table is not zeroed
  // first. Within a part, a block's arrivals are gathered member by member, then written to the
  // table collective by collective, kBlock values in a row. Written one by one, each value lands
  // n values (a page and more) from the last: a TLB miss each, most of the time here.
  std::unique_ptr<int64_t[]> arrival(new int64_t[compared * n]);
  split_in_parallel(n, parts, [&](size_t, size_t begin, size_t end) {
    std::vector<char> everywhere(compared, 1);
    std::vector<int64_t> block(compared * kBlock);
    walk(
        begin, end, everywhere, [&](size_t k, size_t, size_t b, int64_t at) { block[k * kBlock + b] = at; },
        [&](size_t m0, size_t width) {
          for (size_t k = 0; k < compared; ++k) {
            std::copy_n(block.begin() + static_cast<std::ptrdiff_t>(k * kBlock), width, &arrival[k * n + m0]);
          }
        });
  });

  // Per collective: the median member's arrival; the collectives split among the threads.
  std::vector<int64_t> median_at(compared);
  split_in_parallel(compared, a.threads_for(n, 8192), [&](size_t, size_t begin, size_t end) {
    std::vector<int64_t> sorted(n);
    for (size_t k = begin; k < end; ++k) {
      const int64_t* row = &arrival[k * n];
      std::copy(row, row + n, sorted.begin());
      std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(n / 2), sorted.end());
      median_at[k] = sorted[n / 2];
    }
  });
  // A member's lateness (later than the median member, in ns) at each collective.
  auto late_of = [&](size_t m) {
    std::vector<int64_t> late(compared);
    for (size_t k = 0; k < compared; ++k) late[k] = arrival[k * n + m] - median_at[k];
    return late;
  };

  for (size_t m = 0; m < n; ++m) {
    if (!last_too_often(last_count[m], compared, n)) continue;
    std::vector<int64_t> late = late_of(m);
    if (median_of(late) < kMinLateNs) continue;
    // Since when: after the last run of kRunEnds collectives in a row at which it was not last.
    size_t since = 0, run = 0;
    for (size_t k = 0; k < seqs.size(); ++k) {
      run = last_of[k] == m ? 0 : run + 1;
      if (run >= kRunEnds) since = k + 1;
    }
    while (since < seqs.size() && last_of[since] != m) ++since;
    if (since >= seqs.size()) continue;  // lateness that ended: no straggler now
    std::vector<CallTiming> calls;
    member_calls(view_of(m), member_id(m), calls);
    line_up(calls, seqs);
    Straggler s;
    s.rank = a.rank(g.members[m].view);
    s.comm = comm;
    s.compared = seqs.size();
    s.last = last_count[m];
    s.since_seq = seqs[since];
    s.since_oldest = since == 0;
    s.since_ns = calls[since].issued_ns;
    std::vector<int64_t> recent(late.begin() + static_cast<std::ptrdiff_t>(since), late.end());
    s.median_late_ns = median_of(recent);
    s.p95_late_ns = quantile_of(recent, 0.95);
    s.by_timestamps = one_host;
    // The collective and line it is most often last at.
    std::map<std::pair<std::string, uint32_t>, size_t> where;
    for (size_t k = since; k < seqs.size(); ++k) {
      if (last_of[k] != m) continue;
      const CallTiming& t = calls[k];
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
