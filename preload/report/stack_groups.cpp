#include "report/stack_groups.h"

#include <map>

#include <fmt/format.h>

namespace hangshim::report {

namespace {

std::string signature(const pyframes::Process& p) {
  std::string out;
  for (const auto& t : p.threads) {
    out += t.name;
    out += '\n';
    for (const auto& f : t.frames) {
      out += fmt::format("{}\t{}\t{}\t{}\n", f.kind == pyframes::Frame::Kind::Python ? 'p' : 'n', f.function, f.file, f.line);
    }
    out += '\x1e';
  }
  return out;
}

}  // namespace

void group_stacks(const Inputs& inputs, const std::set<int>& ranks, Diagnosis& d) {
  std::map<std::string, size_t> by_signature;
  for (const auto& v : inputs.ranks) {
    if (v.stacks < 0 || ranks.count(v.rank) == 0) continue;
    const pyframes::Process& p = inputs.stacks[static_cast<size_t>(v.stacks)];
    std::string sig = signature(p);
    auto it = by_signature.find(sig);
    if (it != by_signature.end()) {
      d.stack_groups[it->second].ranks.push_back(v.rank);
      continue;
    }
    by_signature.emplace(std::move(sig), d.stack_groups.size());
    d.stack_groups.push_back({{v.rank}, static_cast<int>(d.processes.size())});
    d.processes.push_back(p);
  }
}

}  // namespace hangshim::report
