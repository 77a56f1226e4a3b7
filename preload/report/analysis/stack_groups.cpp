#include "report/analysis/stack_groups.h"

#include <fmt/format.h>

#include <charconv>

#include "pyframes/merge.h"

namespace hangshim::report {

void group_stacks(const Inputs& inputs, const std::set<int>& ranks, Diagnosis& d) {
  for (const auto& v : inputs.ranks) {  // in rank order
    if (v.stacks < 0 || ranks.count(v.rank) == 0) continue;
    pyframes::Process p = inputs.stacks[static_cast<size_t>(v.stacks)];
    p.rank = fmt::format("{}", v.rank);  // the ledger's rank names it, whatever its environment says
    d.processes.push_back(std::move(p));
  }
  if (d.processes.empty()) return;
  pyframes::MergedStacks merged = pyframes::merge_stacks(d.processes);
  for (const auto& stack : pyframes::distinct_stacks(merged)) {
    StackGroup group;
    for (uint32_t m : stack.members) {
      const pyframes::MergeMember& member = merged.members[m];
      int rank = -1;
      std::from_chars(member.rank.data(), member.rank.data() + member.rank.size(), rank);
      group.ranks.push_back(rank);
      if (group.stacks < 0) group.stacks = static_cast<int>(member.process);
    }
    d.stack_groups.push_back(std::move(group));
  }
}

}  // namespace hangshim::report
