// Collective #k failed on some members (the call returned an NCCL error, or the asynchronous
// error was recorded): they will not complete it, the others wait.
#include <map>

#include "report/analysis/classify.h"

namespace hangshim::report {

namespace {

bool failed(int32_t result) { return ledger::is_failure(result); }

}  // namespace

std::optional<Finding> classify_error(const Analysis& a, const AtSeq& at) {
  std::map<int32_t, std::vector<size_t>> by_error;
  std::vector<size_t> waiting;
  for (size_t i = 0; i < at.issued.size(); ++i) {
    const auto* r = at.records[i];
    if (r != nullptr && a.cancelled(at.issued[i], *r)) continue;  // revoked: cancelled, not failed
    if (r != nullptr && failed(r->result)) {
      by_error[r->result].push_back(at.issued[i]);
    } else if (r == nullptr || a.pending(at.issued[i], *r)) {
      waiting.push_back(at.issued[i]);
    }
  }
  if (by_error.empty()) return std::nullopt;
  Finding f = finding_at(Kind::NcclError, at);
  f.attribute = "result";
  std::vector<size_t> culprits;
  for (const auto& [code, views] : by_error) {
    f.values.push_back({ledger::result_name(code), ranks_of(a, views)});
    culprits.insert(culprits.end(), views.begin(), views.end());
  }
  f.culprits = ranks_of(a, culprits);
  f.waiting = ranks_of(a, waiting);
  return f;
}

}  // namespace hangshim::report
