// A member that exited or died while inside collective #k (its ledger still shows the call
// pending): the others can never complete it.
#include "report/analysis/classify.h"

namespace hangshim::report {

std::optional<Finding> classify_dead(const Analysis& a, const AtSeq& at) {
  std::vector<size_t> dead, exited, waiting;
  for (size_t i = 0; i < at.issued.size(); ++i) {
    size_t v = at.issued[i];
    RankState state = a.situations[v].state;
    if (state == RankState::Dead) {
      dead.push_back(v);
    } else if (state == RankState::Exited) {
      exited.push_back(v);
    } else if (at.records[i] == nullptr || a.pending(v, *at.records[i])) {
      waiting.push_back(v);
    }
  }
  // Nobody alive waits in it: the job ended (every rank exited normally, its last collective
  // merely unconfirmed), nothing hangs here.
  if ((dead.empty() && exited.empty()) || waiting.empty()) return std::nullopt;
  Finding f = finding_at(dead.empty() ? Kind::RankExited : Kind::HeartbeatLost, at);
  dead.insert(dead.end(), exited.begin(), exited.end());
  f.culprits = ranks_of(a, dead);
  f.waiting = ranks_of(a, waiting);
  f.reason = "inside the collective when it ended";
  return f;
}

}  // namespace hangshim::report
