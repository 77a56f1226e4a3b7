#include "report/analysis/captured_calls.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace hangshim::report {

using namespace hangshim::ledger;

void find_captured_calls(const Analysis& a, std::vector<CommSummary>& comms) {
  // (communicator, op, file, line) -> the call and who captured it.
  std::map<std::tuple<int, std::string, std::string, int>, CapturedCall> found;
  for (size_t v = 0; v < a.in.ranks.size(); ++v) {
    if (!a.has_records(v, Analysis::kHasCaptured)) continue;
    for (const auto& r : a.in.ranks[v].records) {
      if ((r.flags & kRecordCaptured) == 0) continue;
      int comm = a.comm_of(v, r.comm);
      if (comm < 0 || static_cast<size_t>(comm) >= comms.size()) continue;
      std::optional<Site> site = a.site(v, r);
      std::string op = display_op(r);
      auto key = std::make_tuple(comm, op, site ? site->file : std::string(), site ? site->line : 0);
      CapturedCall& c = found[key];
      c.op = op;
      c.site = site;
      ++c.records;
      if (std::find(c.ranks.begin(), c.ranks.end(), a.rank(v)) == c.ranks.end()) c.ranks.push_back(a.rank(v));
    }
  }
  for (auto& [key, call] : found) {
    std::sort(call.ranks.begin(), call.ranks.end());
    comms[static_cast<size_t>(std::get<0>(key))].captured.push_back(std::move(call));
  }
}

}  // namespace hangshim::report
