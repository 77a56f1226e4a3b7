// Across communicators: a rank missing from one communicator's collective is often waiting in
// another's. Findings are linked ("blocked by"), the kinds that depend on where the missing
// ranks are get decided, a cycle of waits (a sub-group collective skipped by a rank that went on
// to the world collective its peers never reach) is cut at the communicator that explains it
// with the fewest ranks, and the root cause that blocks the most ranks becomes the verdict.
// A finding whose culprits are partly waiting elsewhere and partly waiting on nobody is blocked
// by the finding down the chain whose culprits are exactly those (ranks 0,2 wait for 1,3 in the
// world; 1 waits for 3 in a sub-group; 3 is outside NCCL: the cause is 3, not "1 and 3"). The
// verdict then carries the chain of who waits for whom, nearest first.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "report/analysis/classify.h"
#include "report/analysis/rank_ranges.h"

namespace hangshim::report {

namespace {

// Situations follow the views, which are sorted by rank.
const RankSituation* situation_of(const Analysis& a, int rank) { return a.situation_of(rank); }

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
  const std::string who = ranks_phrase(f.culprits);
  if (dead) {
    f.kind = Kind::HeartbeatLost;
    f.reason = fmt::format("evidence: {} never issued #{} and died first (its ledger's heartbeat or process)", who, f.seq);
  } else if (exited) {
    f.kind = Kind::RankExited;
    f.reason = fmt::format("evidence: {} never issued #{}; its ledger recorded its exit", who, f.seq);
  } else if (all_outside) {
    if (!decide_uneven_steps(a, f)) {
      f.kind = Kind::StuckOutsideNccl;
      f.reason = fmt::format("evidence: {} never issued #{}, is alive outside NCCL and not out of the loop one "
                             "iteration behind (its stack, where known, is still in the loop): stuck where its "
                             "stack shows",
                             who, f.seq);
    }
  } else if (all_elsewhere && elsewhere >= 0) {
    f.kind = comm.subgroup ? Kind::SubgroupHang : Kind::MissingRank;
    f.blocked_by = elsewhere;
    f.root_cause = false;
    f.reason = fmt::format("evidence: {} never issued #{}: {} in another communicator's collective", who, f.seq,
                           f.culprits.size() == 1 ? "it waits" : "they wait");
  } else {
    f.kind = comm.subgroup ? Kind::SubgroupHang : Kind::MissingRank;
    f.reason = fmt::format("evidence: {} never issued #{}", who, f.seq);
  }
}

// Whether rank r is one of the waiting ranks of another communicator's finding; its index.
int waits_in(const Analysis& a, const std::vector<Finding>& findings, const std::map<int, int>& by_comm, int rank,
             int comm) {
  const RankSituation* s = situation_of(a, rank);
  if (s == nullptr || !s->current || s->current->comm == comm) return -1;
  if (s->state != RankState::InCollective && s->state != RankState::InP2P) return -1;
  auto it = by_comm.find(s->current->comm);
  if (it == by_comm.end()) return -1;
  const auto& waiting = findings[static_cast<size_t>(it->second)].waiting;
  return std::find(waiting.begin(), waiting.end(), rank) != waiting.end() ? it->second : -1;
}

int root_of(const std::vector<Finding>& findings, int i) {
  for (size_t steps = 0; i >= 0 && findings[static_cast<size_t>(i)].blocked_by >= 0 && steps < findings.size(); ++steps) {
    i = findings[static_cast<size_t>(i)].blocked_by;
  }
  return i;
}

// Culprits split between ranks that wait in another finding and ranks that wait on nobody: when
// a root cause down one of those chains names exactly the latter among its culprits, that is
// this finding's cause too.
void follow_partial_chains(const Analysis& a, std::vector<Finding>& findings, const std::map<int, int>& by_comm) {
  for (size_t i = 0; i < findings.size(); ++i) {
    Finding& f = findings[i];
    if (!f.root_cause || f.blocked_by >= 0) continue;
    std::vector<int> free_ranks;
    std::vector<int> through;  // the finding each waiting culprit waits in
    for (int r : f.culprits) {
      int elsewhere = waits_in(a, findings, by_comm, r, f.comm);
      if (elsewhere >= 0 && elsewhere != static_cast<int>(i)) {
        through.push_back(elsewhere);
      } else {
        free_ranks.push_back(r);
      }
    }
    if (through.empty() || free_ranks.empty()) continue;
    for (int g : through) {
      int root = root_of(findings, g);
      if (root < 0 || root == static_cast<int>(i)) continue;
      const auto& cause = findings[static_cast<size_t>(root)].culprits;
      bool covers = std::all_of(free_ranks.begin(), free_ranks.end(),
                                [&](int r) { return std::find(cause.begin(), cause.end(), r) != cause.end(); });
      if (!covers) continue;
      f.blocked_by = g;
      f.root_cause = false;
      break;
    }
  }
}

// The ranks at the end of the waits that start at `f`'s culprits: each culprit that waits in
// another finding leads to that finding's culprits, and so on. False when a path runs into a
// cycle (a wait that loops back: the cycle cutting above has named its cause already). `links`
// gets the findings passed through, nearest first.
bool terminal_ranks(const Analysis& a, const std::vector<Finding>& findings, const std::map<int, int>& by_comm, int start,
                    std::set<int>& out, std::vector<int>& links) {
  std::vector<int> frontier = {start};
  std::set<int> visited = {start};
  while (!frontier.empty()) {
    std::vector<int> next;
    for (int i : frontier) {
      const Finding& f = findings[static_cast<size_t>(i)];
      for (int r : f.culprits) {
        int g = waits_in(a, findings, by_comm, r, f.comm);
        if (g < 0 || g == i) {
          out.insert(r);
        } else if (visited.count(g) != 0) {
          if (g == start || std::find(frontier.begin(), frontier.end(), g) != frontier.end()) return false;
        } else {
          visited.insert(g);
          next.push_back(g);
          links.push_back(g);
        }
      }
    }
    frontier = std::move(next);
  }
  return true;
}

// The findings blocked, directly or through others, by `root`: nearest first.
std::vector<WaitLink> chain_of(const std::vector<Finding>& findings, int root) {
  std::vector<WaitLink> out;
  std::vector<int> level = {root};
  std::vector<bool> seen(findings.size(), false);
  seen[static_cast<size_t>(root)] = true;
  while (!level.empty()) {
    std::vector<int> next;
    for (size_t i = 0; i < findings.size(); ++i) {
      const Finding& f = findings[i];
      if (seen[i] || std::find(level.begin(), level.end(), f.blocked_by) == level.end()) continue;
      seen[i] = true;
      next.push_back(static_cast<int>(i));
      out.push_back({f.waiting, f.culprits, f.comm, f.seq, f.op, static_cast<int>(i)});
    }
    level = std::move(next);
  }
  return out;
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
  follow_partial_chains(a, findings, by_comm);
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
  if (best < 0) return best;
  Finding& verdict = findings[static_cast<size_t>(best)];
  verdict.chain = chain_of(findings, best);
  // Some of the verdict's culprits still wait for others, in another communicator: the cause
  // is the ranks at the end of those waits; the ranks in between join the chain.
  std::set<int> cause;
  std::vector<int> through;
  if (verdict.never_issued && !verdict.ambiguous && terminal_ranks(a, findings, by_comm, best, cause, through) &&
      !through.empty() && !cause.empty()) {
    std::vector<WaitLink> links;
    for (int g : through) {
      const Finding& f = findings[static_cast<size_t>(g)];
      links.push_back({f.waiting, f.culprits, f.comm, f.seq, f.op, g});
    }
    verdict.chain.insert(verdict.chain.begin(), links.begin(), links.end());
    verdict.culprits.assign(cause.begin(), cause.end());
    decide_missing(a, findings, static_cast<size_t>(best), by_comm);
    // The cause waits on nobody: it stays the root whatever another communicator's call it is in.
    verdict.blocked_by = -1;
    verdict.root_cause = true;
  }
  decide_aborted(a, verdict);  // a watchdog that gave up on it ended the hang: say so (classify_abort.cpp)
  return best;
}

}  // namespace hangshim::report
