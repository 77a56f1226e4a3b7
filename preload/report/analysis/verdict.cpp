// Across communicators: a rank missing from one communicator's collective is often waiting in
// another's. Findings are linked ("blocked by"), the kinds that depend on where the missing
// ranks are get decided, a cycle of waits (a sub-group collective skipped by a rank that went on
// to the world collective its peers never reach) is cut at the communicator that explains it
// with the fewest ranks, and the root cause that blocks the most ranks becomes the verdict.
#include <algorithm>
#include <map>
#include <set>

#include "report/analysis/classify.h"

namespace hangshim::report {

namespace {

// Situations follow the views, which are sorted by rank.
const RankSituation* situation_of(const Analysis& a, int rank) {
  auto it = std::lower_bound(a.situations.begin(), a.situations.end(), rank,
                             [](const RankSituation& s, int r) { return s.rank < r; });
  return it != a.situations.end() && it->rank == rank ? &*it : nullptr;
}

void decide_missing(const Analysis& a, std::vector<Finding>& findings, size_t index, const std::map<int, int>& by_comm) {
  Finding& f = findings[index];
  bool dead = false, exited = false, all_outside = true, all_elsewhere = true;
  int elsewhere = -1;
  for (int r : f.culprits) {
    const RankSituation* s = situation_of(a, r);
    RankState state = s != nullptr ? s->state : RankState::Unknown;
    dead = dead || state == RankState::Dead;
    exited = exited || state == RankState::Exited;
    all_outside = all_outside && state == RankState::OutsideNccl;
    bool waits_elsewhere = state == RankState::InCollective && s->current && s->current->comm != f.comm &&
                           by_comm.count(s->current->comm) != 0;
    all_elsewhere = all_elsewhere && waits_elsewhere;
    if (waits_elsewhere && elsewhere < 0) elsewhere = by_comm.at(s->current->comm);
  }
  const CommSummary& comm = a.comms[static_cast<size_t>(f.comm)];
  if (dead) {
    f.kind = Kind::HeartbeatLost;
  } else if (exited) {
    f.kind = Kind::RankExited;
  } else if (all_outside) {
    f.kind = Kind::StuckOutsideNccl;
  } else if (all_elsewhere && elsewhere >= 0) {
    f.kind = comm.subgroup ? Kind::SubgroupHang : Kind::MissingRank;
    f.blocked_by = elsewhere;
    f.root_cause = false;
  } else {
    f.kind = comm.subgroup ? Kind::SubgroupHang : Kind::MissingRank;
  }
}

// The finding of a cycle that explains it best: a sub-group's collective before the larger one
// (smaller communicators' hangs propagate up, not down), then the fewest culprits, then a
// communicator split from another.
size_t cycle_root(const Analysis& a, const std::vector<Finding>& findings, const std::vector<size_t>& cycle) {
  return *std::min_element(cycle.begin(), cycle.end(), [&](size_t x, size_t y) {
    const Finding& fx = findings[x];
    const Finding& fy = findings[y];
    const CommSummary& cx = a.comms[static_cast<size_t>(fx.comm)];
    const CommSummary& cy = a.comms[static_cast<size_t>(fy.comm)];
    if (cx.nranks != cy.nranks) return cx.nranks < cy.nranks;
    if (fx.culprits.size() != fy.culprits.size()) return fx.culprits.size() < fy.culprits.size();
    if ((cx.parent >= 0) != (cy.parent >= 0)) return cx.parent >= 0;
    return fx.comm < fy.comm;
  });
}

}  // namespace

int resolve_findings(const Analysis& a, std::vector<Finding>& findings) {
  if (findings.empty()) return -1;
  std::map<int, int> by_comm;
  for (size_t i = 0; i < findings.size(); ++i) by_comm[findings[i].comm] = static_cast<int>(i);
  for (size_t i = 0; i < findings.size(); ++i) {
    if (findings[i].never_issued && findings[i].kind != Kind::InitHang) decide_missing(a, findings, i, by_comm);
  }
  // Cut cycles of waits.
  for (size_t start = 0; start < findings.size(); ++start) {
    std::vector<size_t> path;
    size_t j = start;
    while (findings[j].blocked_by >= 0 && std::find(path.begin(), path.end(), j) == path.end()) {
      path.push_back(j);
      j = static_cast<size_t>(findings[j].blocked_by);
    }
    auto at = std::find(path.begin(), path.end(), j);
    if (at == path.end()) continue;  // the chain ends at a root cause
    std::vector<size_t> cycle(at, path.end());
    size_t root = cycle_root(a, findings, cycle);
    findings[root].blocked_by = -1;
    findings[root].root_cause = true;
  }
  // The root cause holding the most ranks.
  std::vector<std::set<int>> held(findings.size());
  for (size_t i = 0; i < findings.size(); ++i) {
    size_t j = i;
    for (size_t steps = 0; findings[j].blocked_by >= 0 && steps < findings.size(); ++steps) {
      j = static_cast<size_t>(findings[j].blocked_by);
    }
    held[j].insert(findings[i].waiting.begin(), findings[i].waiting.end());
    held[j].insert(findings[i].culprits.begin(), findings[i].culprits.end());
  }
  int best = -1;
  for (size_t i = 0; i < findings.size(); ++i) {
    if (!findings[i].root_cause) continue;
    if (best < 0 || held[i].size() > held[static_cast<size_t>(best)].size()) best = static_cast<int>(i);
  }
  return best;
}

}  // namespace hangshim::report
