#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "report/analysis/classify.h"
#include "report/analysis/rank_ranges.h"
#include "report/analysis/split_in_parallel.h"

namespace hangshim::report {

using namespace hangshim::ledger;

std::vector<int> ranks_of(const Analysis& a, const std::vector<size_t>& views) {
  std::vector<int> out;
  out.reserve(views.size());
  for (size_t v : views) out.push_back(a.rank(v));
  std::sort(out.begin(), out.end());
  return out;
}

std::string majority_op(const AtSeq& at) {
  std::map<std::string, size_t> votes;
  for (const auto* r : at.records) {
    if (r != nullptr) ++votes[display_op(*r)];
  }
  std::string best;
  size_t most = 0;
  for (const auto& [op, n] : votes) {
    if (n > most) {
      best = op;
      most = n;
    }
  }
  return best;
}

Finding finding_at(Kind kind, const AtSeq& at) {
  Finding f;
  f.kind = kind;
  f.comm = at.comm;
  f.seq = at.seq;
  f.op = majority_op(at);
  return f;
}

std::vector<int> ranks_besides(const std::vector<ValueGroup>& values, const std::vector<int>& culprits) {
  std::vector<int> out;
  for (const auto& g : values) {
    for (int r : g.ranks) {
      if (std::find(culprits.begin(), culprits.end(), r) == culprits.end()) out.push_back(r);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int> deviating_ranks(const std::vector<ValueGroup>& values, std::string* reason) {
  if (values.size() < 2) return {};
  size_t reference = 0;
  bool tie = false;
  for (size_t i = 1; i < values.size(); ++i) {
    const auto& a = values[i].ranks;
    const auto& b = values[reference].ranks;
    if (a.size() > b.size()) {
      reference = i;
      tie = false;
    } else if (a.size() == b.size()) {
      tie = true;
      if (!a.empty() && (b.empty() || a.front() < b.front())) reference = i;
    }
  }
  // A tie among the largest groups only matters if the reference is one of them.
  if (tie) {
    size_t largest = values[reference].ranks.size();
    size_t count = 0;
    for (const auto& v : values) count += v.ranks.size() == largest ? 1 : 0;
    tie = count > 1;
  }
  std::vector<int> out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i != reference) out.insert(out.end(), values[i].ranks.begin(), values[i].ranks.end());
  }
  std::sort(out.begin(), out.end());
  if (reason != nullptr) {
    *reason = tie ? fmt::format("as many ranks on each side: {}'s {} is taken as the reference",
                                ranks_phrase(values[reference].ranks), values[reference].value)
                  : fmt::format("{} of {} ranks agree on {}", values[reference].ranks.size(),
                                out.size() + values[reference].ranks.size(), values[reference].value);
  }
  return out;
}

std::optional<Finding> classify_comm(const Analysis& a, int comm) {
  const CommGroup& g = a.groups[static_cast<size_t>(comm)];
  if (g.members.empty()) return std::nullopt;
  if (auto finding = classify_init(a, comm)) return finding;
  uint64_t min_completed = UINT64_MAX;
  uint64_t max_issued = 0;
  for (const auto& m : g.members) {
    min_completed = std::min(min_completed, a.completed(g, m));
    max_issued = std::max(max_issued, m.info->coll_issued);
  }
  AtSeq at;
  at.comm = comm;
  at.seq = min_completed + 1;
  if (at.seq > max_issued) return std::nullopt;  // every member completed all it issued
  for (const auto& m : g.members) (m.info->coll_issued >= at.seq ? at.issued : at.missing).push_back(m.view);
  // Each member's record of #k, found in its own records: split among the threads.
  at.records.resize(at.issued.size());
  split_in_parallel(at.issued.size(), a.threads_for(at.issued.size(), 8192), [&](size_t, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) at.records[i] = a.collective_at(at.issued[i], comm, at.seq);
  });
  // ncclCommRevoke cancelled #k on every member that issued it: nobody waits in it, whoever
  // did not issue it.
  bool someone_waits = false;
  for (size_t i = 0; i < at.issued.size(); ++i) {
    if (at.records[i] == nullptr || !a.cancelled(at.issued[i], *at.records[i])) someone_waits = true;
  }
  if (!someone_waits) return std::nullopt;
  if (!at.missing.empty()) {
    // The ranks that did issue #k did so from different lines, and the evidence says why (an
    // extra collective in the loop, a swapped order): that is the cause, and the members still
    // missing wait for it elsewhere (a tensor-parallel partner in its group's collective).
    if (auto diverged = classify_divergence_by_evidence(a, at)) return diverged;
    return classify_missing(a, at);
  }
  // A program error at #k (ranks disagree on it) was there before anyone died or failed in it:
  // it comes first; a rank that ended inside an otherwise consistent #k comes next.
  for (auto classify : {classify_divergence, classify_mismatch, classify_dead, classify_error, classify_stall}) {
    if (auto finding = classify(a, at)) return finding;
  }
  return std::nullopt;
}

}  // namespace hangshim::report
