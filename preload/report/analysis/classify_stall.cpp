// Every member issued collective #k with the same arguments from the same line, and it does not
// complete: nothing in the program is wrong at this point. The data never arrives: a network
// path, an interface NCCL picked badly, or a GPU or link that stopped. When some members did
// complete it, the rest are the ones whose GPU or link is stuck.
#include "report/analysis/classify.h"

namespace hangshim::report {

std::optional<Finding> classify_stall(const Analysis& a, const AtSeq& at) {
  std::vector<size_t> stuck, done;
  for (size_t i = 0; i < at.issued.size(); ++i) {
    const auto* r = at.records[i];
    bool pending = false;
    if (r != nullptr) {
      pending = a.pending(at.issued[i], *r);
    } else if (const ledger::CommInfo* info = a.member_info(at.issued[i], at.comm)) {
      pending = info->coll_completed < at.seq;  // out of the ring: the counters tell
    }
    (pending ? stuck : done).push_back(at.issued[i]);
  }
  if (stuck.empty()) return std::nullopt;
  Finding f = finding_at(Kind::Transport, at);
  f.waiting = ranks_of(a, stuck);
  if (!done.empty()) {
    f.culprits = f.waiting;
    f.reason = "the other ranks completed it";
  } else {
    f.reason = "every rank issued it with the same arguments and none completed it";
  }
  return f;
}

}  // namespace hangshim::report
