// The verdict's collective #k was pending when members that waited in it aborted its
// communicator (ncclCommAbort): a watchdog gave up on it. PyTorch's NCCL watchdog does this when a
// collective outlives the process group's timeout (TORCH_NCCL_ASYNC_ERROR_HANDLING), and then
// takes the process down. The job did not hang on: it was aborted, and the hang that made the
// watchdog give up is still the cause. So the finding keeps what it found (the ranks that never
// issued #k, or that none completed it) and becomes Kind::Aborted, with who aborted which
// communicator, after how long, and the kind it had before (Abort::hang).
//
// Only an abort by a member that had issued #k counts: a rank that aborts a communicator without
// having reached #k is leaving (some versions of PyTorch's destroy_process_group abort instead of
// destroying), not giving up on #k, and a job whose every collective completed before an abort is
// healthy whatever ended it.
#include <algorithm>
#include <map>

#include "report/analysis/classify.h"

namespace hangshim::report {

using namespace hangshim::ledger;

namespace {

// Whether and when a view aborted communicator `comm`: its ncclCommAbort record, else the
// communicator's state (the record gone from the ring: its end time, when recorded).
struct AbortSeen {
  bool aborted = false;
  uint64_t at_ns = 0;   // 0: when is unknown
  bool inside = false;  // the abort has not returned
};

AbortSeen abort_seen(const Analysis& a, size_t view, int comm, const CommInfo& info) {
  const auto& records = a.in.ranks[view].records;
  for (auto it = records.rbegin(); a.has_records(view, Analysis::kHasAbort) && it != records.rend(); ++it) {
    if (static_cast<Op>(it->op) != Op::CommAbort || a.comm_of(view, it->comm) != comm) continue;
    if (it->returned_ns != 0 && is_failure(it->result)) continue;  // refused (a bad handle): nothing aborted
    return {true, it->issued_ns, it->returned_ns == 0};
  }
  if (info.state == static_cast<uint32_t>(CommState::Aborted)) return {true, info.ended_ns, false};
  return {};
}

std::optional<Abort> aborted_at(const Analysis& a, int comm, uint64_t seq) {
  if (comm < 0 || static_cast<size_t>(comm) >= a.groups.size() || seq == 0) return std::nullopt;
  Abort abort;
  abort.comm = comm;
  abort.seq = seq;
  std::vector<size_t> aborting, inside, issued, not_reached;
  std::map<std::string, std::vector<size_t>> async_errors;
  uint64_t first_abort = 0;
  const CallRecord* pending_record = nullptr;
  size_t pending_view = 0;
  for (const auto& m : a.groups[static_cast<size_t>(comm)].members) {
    if (m.info->async_error != 0) async_errors[result_name(m.info->async_error)].push_back(m.view);
    bool reached = m.info->coll_issued >= seq;
    (reached ? issued : not_reached).push_back(m.view);
    AbortSeen seen = abort_seen(a, m.view, comm, *m.info);
    if (!seen.aborted || !reached) continue;
    const uint64_t when = seen.at_ns;
    const CallRecord* record = a.collective_at(m.view, comm, seq);
    if (record != nullptr && when != 0 && when < record->issued_ns) continue;  // aborted before it issued #seq: not this
    aborting.push_back(m.view);
    if (seen.inside) inside.push_back(m.view);
    if (record != nullptr) {
      uint64_t waited = when > record->issued_ns ? when - record->issued_ns : 0;  // 0: unknown
      if (pending_record == nullptr || (when != 0 && (first_abort == 0 || when < first_abort))) {
        pending_record = record;
        pending_view = m.view;
        first_abort = when;
        abort.pending_ns = waited;
      }
    }
  }
  if (aborting.empty()) return std::nullopt;
  abort.ranks = ranks_of(a, aborting);
  abort.inside = ranks_of(a, inside);
  abort.issued = ranks_of(a, issued);
  abort.not_reached = ranks_of(a, not_reached);
  if (pending_record != nullptr) {
    abort.call = a.call(pending_view, *pending_record);
    abort.op = abort.call->op;
  }
  for (const auto& [name, views] : async_errors) abort.async_errors.push_back({name, ranks_of(a, views)});
  return abort;
}

}  // namespace

bool decide_aborted(const Analysis& a, Finding& f) {
  if (f.kind == Kind::InitHang || f.kind == Kind::InitFailed || f.kind == Kind::Aborted) return false;
  // The verdict's own communicator first, then those down its chain of waits (ranks waiting in
  // the world for a sub-group whose members aborted it).
  std::optional<Abort> abort = aborted_at(a, f.comm, f.seq);
  for (size_t i = 0; !abort && i < f.chain.size(); ++i) abort = aborted_at(a, f.chain[i].comm, f.chain[i].seq);
  if (!abort) return false;
  if (abort->op.empty()) abort->op = abort->comm == f.comm ? f.op : std::string();
  abort->hang = f.kind;
  f.kind = Kind::Aborted;
  f.reason = (f.reason.empty() ? std::string() : f.reason + "; ") +
             "evidence: the ranks that aborted the communicator had issued the collective, which was still pending";
  f.abort = std::move(abort);
  return true;
}

}  // namespace hangshim::report
