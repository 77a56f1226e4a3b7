#include "report/analysis/overdue_calls.h"

#include "ledger/stall_model.h"

namespace hangshim::report {

std::vector<PendingCall> pending_calls(const Inputs& inputs, uint64_t now_ns) {
  std::vector<PendingCall> out;
  for (const RankView& v : inputs.ranks) {
    const ledger::CallRecord* oldest = nullptr;
    for (const auto& r : v.records) {
      // A call captured into a CUDA graph is never overdue: its replays run without NCCL.
      if ((r.flags & ledger::kRecordCaptured) != 0) continue;
      if (r.completed_ns == 0 && (oldest == nullptr || r.index < oldest->index)) oldest = &r;
    }
    if (oldest == nullptr) continue;
    PendingCall p;
    p.rank = v.rank;
    p.op = display_op(*oldest);
    p.seq = oldest->seq;
    p.pending_ns = now_ns > oldest->issued_ns ? now_ns - oldest->issued_ns : 0;
    p.learned = v.header.stall_seconds == 0;
    if (p.learned) {
      ledger::StallModel model({}, 256);  // the history holds at most a few hundred keys
      for (const CallTiming& t : v.history) model.learn(ledger::StallModel::key(t.comm, t.callsite, t.op), t.wait_ns());
      uint64_t key = ledger::StallModel::key(oldest->comm, oldest->callsite, oldest->op);
      p.limit_ns = model.limit_ns(key);
      p.warm = model.samples(key) >= model.settings().min_samples;
    } else {
      p.limit_ns = uint64_t{v.header.stall_seconds} * 1000000000ull;
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<PendingCall> overdue_calls(const Inputs& inputs, uint64_t now_ns) {
  std::vector<PendingCall> out;
  for (auto& p : pending_calls(inputs, now_ns)) {
    if (p.overdue()) out.push_back(std::move(p));
  }
  return out;
}

}  // namespace hangshim::report
