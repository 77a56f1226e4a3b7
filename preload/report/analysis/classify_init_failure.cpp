// Communicator init that returned an error (ncclCommInitRank, ...Config, ...Scalable,
// ncclCommInitAll, ncclCommSplit, ncclCommShrink): no usable GPU, a driver older than the CUDA
// runtime NCCL was built for, an unreachable network. Such a rank has no communicator, so no
// collective of it ever pends and every per-collective classifier sees nothing wrong; the other
// ranks, if any, wait in init for it. The failure is the verdict, with NCCL's own words about it
// (ncclGetLastError, which the shim keeps in the ledger's first-error area).
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "report/analysis/classify.h"

namespace hangshim::report {

using namespace hangshim::ledger;

namespace {

struct Failed {
  const CallRecord* record = nullptr;  // its record, nullptr when only the first-error area has it
  uint8_t op = 0;
  int32_t result = 0;
  std::string text;
};

// A rank's first failed init: from its ring, with the text of the first-error area when that
// area is about the same call; from the area alone when the ring no longer holds the record.
std::optional<Failed> first_failed_init(const RankView& v) {
  const FirstError& e = v.header.first_error;
  for (const auto& r : v.records) {
    if (!is_comm_init(static_cast<Op>(r.op)) || !is_failure(r.result)) continue;
    Failed f{&r, r.op, r.result, {}};
    if (e.present && e.record == r.index) f.text = e.text;
    return f;
  }
  if (e.present && is_comm_init(static_cast<Op>(e.op)) && is_failure(e.result)) {
    bool in_ring = false;
    for (const auto& r : v.records) in_ring = in_ring || r.index == e.record;
    if (!in_ring) return Failed{nullptr, e.op, e.result, e.text};
  }
  return std::nullopt;
}

}  // namespace

std::optional<Finding> classify_init_failure(const Analysis& a) {
  // Ranks that failed alike form one group, whatever communicator each was making (the same
  // error on ranks given different unique ids is still one cause).
  using Key = std::tuple<uint8_t, int32_t, std::string>;  // op, result, text
  struct Group {
    std::vector<int> ranks;
    std::set<int> comms;  // -1: unknown
  };
  std::map<Key, Group> groups;
  std::set<int> comms;
  for (size_t v = 0; v < a.in.ranks.size(); ++v) {
    // Neither its ring nor its first-error area holds a failed init: nothing to look for.
    const FirstError& e = a.in.ranks[v].header.first_error;
    bool area = e.present && is_comm_init(static_cast<Op>(e.op)) && is_failure(e.result);
    if (!area && !a.has_records(v, Analysis::kHasFailedInit)) continue;
    auto failed = first_failed_init(a.in.ranks[v]);
    if (!failed) continue;
    int comm = failed->record != nullptr ? a.comm_of(v, failed->record->comm) : -1;
    if (comm >= 0) comms.insert(comm);
    Group& g = groups[Key{failed->op, failed->result, failed->text}];
    g.ranks.push_back(a.rank(v));
    g.comms.insert(comm);
  }
  if (groups.empty()) return std::nullopt;
  Finding f;
  f.kind = Kind::InitFailed;
  f.attribute = "init";
  f.never_issued = true;
  std::vector<size_t> culprit_views;
  for (const auto& [key, group] : groups) {
    const auto& [op, result, text] = key;
    const std::vector<int>& ranks = group.ranks;
    int comm = group.comms.size() == 1 ? *group.comms.begin() : -1;
    InitFailure failure{ranks, comm, nccl_function_name(op), result, result_name(result), text};
    f.values.push_back({fmt::format("{} returned {}{}", failure.call, failure.error, text.empty() ? "" : ": " + text), ranks});
    if (f.op.empty()) f.op = op_name(op);
    f.culprits.insert(f.culprits.end(), ranks.begin(), ranks.end());
    f.failures.push_back(std::move(failure));
  }
  std::sort(f.culprits.begin(), f.culprits.end());
  // The communicator most of them were making names the finding (the verdict line's "comm").
  f.comm = f.failures.front().comm;
  // Who waits for them: ranks inside init of a communicator a failed rank was making (with the
  // real library a rank waits there for every member; ncclCommInitAll has no other ranks).
  for (size_t v = 0; v < a.situations.size(); ++v) {
    const RankSituation& s = a.situations[v];
    if (s.state == RankState::InCommInit && s.current && comms.count(s.current->comm) != 0) f.waiting.push_back(s.rank);
  }
  f.reason = f.waiting.empty()
                 ? "the init call returned an error: the failed ranks have no communicator, so no collective can run"
                 : "the init call returned an error: the failed ranks have no communicator, and the others wait for "
                   "them in init";
  return f;
}

}  // namespace hangshim::report
