#include "merge/merged_locals.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <unordered_map>

namespace pyframes {

namespace {

// Objects shown by address ("<Sampler object at 0x7f...>") are at different addresses in every
// process: compared without them, so that only real differences (values) split the ranks.
std::string without_addresses(const std::string& repr) {
  static constexpr std::string_view kAt = " at 0x";
  std::string out;
  size_t i = 0;
  for (size_t at = repr.find(kAt); at != std::string::npos; at = repr.find(kAt, i)) {
    size_t end = at + kAt.size();
    while (end < repr.size() && std::isxdigit(static_cast<unsigned char>(repr[end]))) ++end;
    out.append(repr, i, at - i);
    i = end;
  }
  if (i == 0) return repr;
  out.append(repr, i, std::string::npos);
  return out;
}

}  // namespace

const Frame& MergedLocalsBuilder::frame_of(uint32_t member, size_t depth) const {
  const MergeMember& who = members_[member];
  const auto& frames = processes_[who.process].threads[who.thread].frames;
  return frames[frames.size() - 1 - depth];
}

MergedFrame MergedLocalsBuilder::merged_frame(const Frame& representative, const std::vector<uint32_t>& members,
                                              size_t depth) const {
  MergedFrame merged;
  merged.frame = representative;
  merged.frame.locals.clear();
  std::unordered_map<std::string, size_t> by_name;  // variable name -> index in merged.locals
  std::vector<std::unordered_map<std::string, size_t>> by_value;  // per variable: repr -> index in values
  for (uint32_t member : members) {
    for (const Local& local : frame_of(member, depth).locals) {
      auto [slot, added] = by_name.try_emplace(local.name, merged.locals.size());
      if (added) {
        merged.locals.emplace_back();
        merged.locals.back().name = local.name;
        merged.locals.back().is_argument = local.is_argument;
        by_value.emplace_back();
      }
      auto& values = merged.locals[slot->second].values;
      std::string key = without_addresses(local.repr);
      auto [value, new_value] = by_value[slot->second].try_emplace(key, values.size());
      if (new_value) {
        values.push_back(MergedLocal::Value{local.repr, {member}});
      } else {
        MergedLocal::Value& same = values[value->second];
        if (same.repr != local.repr) same.repr = std::move(key);  // equal but for addresses: show neither
        same.members.push_back(member);
      }
    }
  }
  for (MergedLocal& local : merged.locals) {
    std::stable_sort(local.values.begin(), local.values.end(), [](const auto& a, const auto& b) {
      if (a.members.size() != b.members.size()) return a.members.size() < b.members.size();
      return a.members.front() < b.members.front();
    });
  }
  return merged;
}

}  // namespace pyframes
