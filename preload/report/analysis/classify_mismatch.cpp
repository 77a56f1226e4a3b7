// Every member issued collective #k from the same line (or lines are unknown) but not the same
// call: a different operation, data type, element count, root or reduction, or a different
// iteration of that line. NCCL requires them equal; a mismatch hangs or corrupts.
//
// Who is wrong: a rank whose own earlier calls from this line used another value than now
// changed (the size that lost a parameter, the dtype autocast switched); failing that, the
// value most ranks use is the reference; on a tie, the lowest rank's.
#include <algorithm>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "report/analysis/classify.h"
#include "report/analysis/rank_ranges.h"

namespace hangshim::report {

using namespace hangshim::ledger;

namespace {

struct Attribute {
  const char* name;
  Kind kind;
  std::function<std::string(const CallRecord&)> value;
};

const std::vector<Attribute>& attributes() {
  static const std::vector<Attribute> list = {
      {"op", Kind::OpMismatch, [](const CallRecord& r) { return std::string(op_name(r.op)); }},
      {"dtype", Kind::DtypeMismatch, [](const CallRecord& r) { return std::string(dtype_name(r.dtype)); }},
      {"count", Kind::CountMismatch, [](const CallRecord& r) { return fmt::format("{}", r.count); }},
      {"root", Kind::RootMismatch,
       [](const CallRecord& r) { return has_root(static_cast<Op>(r.op)) ? fmt::format("{}", r.peer) : std::string(); }},
      {"reduce op", Kind::ReduceOpMismatch, [](const CallRecord& r) { return std::string(red_op_name(r.red_op)); }},
  };
  return list;
}

// The value this rank used at the same line before, when it differs from now; "" otherwise.
std::string earlier_value(const Analysis& a, size_t view, const CallRecord& now, const Attribute& attr, int comm) {
  SiteKey line = a.site_key(view, now);
  if (!line.known()) return {};
  std::string current = attr.value(now);
  for (const auto& r : a.in.ranks[view].records) {
    if (r.seq >= now.seq || !is_collective(static_cast<Op>(r.op)) || a.comm_of(view, r.comm) != comm) continue;
    if (!(a.site_key(view, r) == line)) continue;
    std::string before = attr.value(r);
    if (before != current) return before;
  }
  return {};
}

}  // namespace

std::optional<Finding> classify_mismatch(const Analysis& a, const AtSeq& at) {
  for (const Attribute& attr : attributes()) {
    std::map<std::string, std::vector<size_t>> by_value;
    for (size_t i = 0; i < at.issued.size(); ++i) {
      if (at.records[i] != nullptr) by_value[attr.value(*at.records[i])].push_back(at.issued[i]);
    }
    if (by_value.size() < 2) continue;
    Finding f = finding_at(attr.kind, at);
    f.attribute = attr.name;
    for (const auto& [value, views] : by_value) f.values.push_back({value, ranks_of(a, views)});

    // Ranks that changed what they pass at this line.
    std::map<std::string, std::vector<int>> unchanged_values;
    std::vector<int> changed;
    std::string changed_from;
    for (size_t i = 0; i < at.issued.size(); ++i) {
      if (at.records[i] == nullptr) continue;
      std::string before = earlier_value(a, at.issued[i], *at.records[i], attr, at.comm);
      if (!before.empty()) {
        changed.push_back(a.rank(at.issued[i]));
        changed_from = before;
      } else {
        unchanged_values[attr.value(*at.records[i])].push_back(a.rank(at.issued[i]));
      }
    }
    if (!changed.empty() && !unchanged_values.empty()) {
      std::vector<ValueGroup> unchanged;
      for (auto& [value, ranks] : unchanged_values) unchanged.push_back({value, ranks});
      std::string ignored;
      std::vector<int> odd = deviating_ranks(unchanged, &ignored);
      const ValueGroup* reference = &unchanged.front();
      for (const auto& g : unchanged) {
        if (std::find(odd.begin(), odd.end(), g.ranks.front()) == odd.end()) reference = &g;
      }
      for (const auto& g : f.values) {
        if (g.value != reference->value) f.culprits.insert(f.culprits.end(), g.ranks.begin(), g.ranks.end());
      }
      std::sort(f.culprits.begin(), f.culprits.end());
      f.reason = fmt::format("{} used {} {} at this line before", ranks_phrase(changed), attr.name, changed_from);
    } else {
      f.culprits = deviating_ranks(f.values, &f.reason);
    }
    f.waiting = ranks_besides(f.values, f.culprits);
    return f;
  }

  // Same line, same call, different iterations of the line.
  std::map<uint64_t, std::vector<size_t>> by_iteration;
  for (size_t i = 0; i < at.issued.size(); ++i) {
    const auto* r = at.records[i];
    if (r != nullptr && r->callsite_hit != 0 && a.site_key(at.issued[i], *r).known()) {
      by_iteration[a.iteration_of(at.issued[i], *r)].push_back(at.issued[i]);
    }
  }
  if (by_iteration.size() < 2) return std::nullopt;
  Finding f = finding_at(Kind::IterationMismatch, at);
  f.attribute = "iteration";
  for (const auto& [iteration, views] : by_iteration) f.values.push_back({fmt::format("{}", iteration), ranks_of(a, views)});
  f.culprits = deviating_ranks(f.values, &f.reason);
  f.waiting = ranks_besides(f.values, f.culprits);
  return f;
}

}  // namespace hangshim::report
