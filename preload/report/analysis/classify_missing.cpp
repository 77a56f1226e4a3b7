// Some members never issued collective #k: the others wait in it for them. Where the missing
// ranks are instead (exited, dead, outside NCCL, in another communicator's collective) decides
// the kind later, in resolve_findings, once every communicator has been examined.
#include "report/analysis/classify.h"

namespace hangshim::report {

std::optional<Finding> classify_missing(const Analysis& a, const AtSeq& at) {
  Finding f = finding_at(Kind::MissingRank, at);
  f.never_issued = true;
  f.culprits = ranks_of(a, at.missing);
  std::vector<size_t> waiting;
  for (size_t i = 0; i < at.issued.size(); ++i) {
    if (at.records[i] == nullptr || a.pending(at.issued[i], *at.records[i])) waiting.push_back(at.issued[i]);
  }
  f.waiting = ranks_of(a, waiting);
  return f;
}

}  // namespace hangshim::report
