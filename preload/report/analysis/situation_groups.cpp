// Two situations are alike when their texts read the same: the state, the call each waits in and
// the last it completed (communicator, op, number, line, iteration, arguments), the line its
// stack is at, and whether it died. Situations are first grouped by those fields themselves,
// hashed (131 072 ranks: no text per rank); each group's text key is made once, and groups whose
// keys coincide all the same (a file name holding the key's separators) are merged, so the
// grouping is exactly that of the texts.
#include "report/analysis/situation_groups.h"

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

namespace hangshim::report {

namespace {

// The text key: what makes two situations the same in the report's eyes.
std::string situation_key(const RankSituation& s) {
  auto call_key = [](const std::optional<Call>& c) {
    if (!c) return std::string("-");
    return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", c->comm, c->op, c->seq, c->site ? c->site->file : "",
                       c->site ? c->site->line : 0, c->iteration, c->count, c->dtype, c->root, c->red_op);
  };
  return fmt::format("{}#{}#{}#{}:{}#{}", static_cast<int>(s.state), call_key(s.current), call_key(s.last),
                     s.now_at ? s.now_at->file : "", s.now_at ? s.now_at->line : 0, s.why_dead.empty() ? "" : "dead");
}

const std::string& site_file(const std::optional<Site>& site) {
  static const std::string none;
  return site ? site->file : none;
}

int site_line(const std::optional<Site>& site) { return site ? site->line : 0; }

bool same_call(const std::optional<Call>& a, const std::optional<Call>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  return a->comm == b->comm && a->seq == b->seq && a->iteration == b->iteration && a->count == b->count &&
         a->root == b->root && site_line(a->site) == site_line(b->site) && a->op == b->op && a->dtype == b->dtype &&
         a->red_op == b->red_op && site_file(a->site) == site_file(b->site);
}

size_t mix(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2)); }

size_t hash_call(const std::optional<Call>& c) {
  if (!c) return 1;
  size_t h = std::hash<int>()(c->comm);
  h = mix(h, std::hash<uint64_t>()(c->seq));
  h = mix(h, std::hash<uint64_t>()(c->iteration));
  h = mix(h, std::hash<std::string>()(c->op));
  return mix(h, std::hash<int>()(site_line(c->site)));
}

struct Alike {
  const std::vector<RankSituation>* all;
  size_t operator()(size_t i) const {
    const RankSituation& s = (*all)[i];
    size_t h = mix(std::hash<int>()(static_cast<int>(s.state)), hash_call(s.current));
    h = mix(h, hash_call(s.last));
    return mix(h, std::hash<int>()(site_line(s.now_at)));
  }
  bool operator()(size_t i, size_t j) const {
    const RankSituation& a = (*all)[i];
    const RankSituation& b = (*all)[j];
    return a.state == b.state && a.why_dead.empty() == b.why_dead.empty() && site_line(a.now_at) == site_line(b.now_at) &&
           site_file(a.now_at) == site_file(b.now_at) && same_call(a.current, b.current) && same_call(a.last, b.last);
  }
};

}  // namespace

std::vector<RankGroup> group_situations(const std::vector<RankSituation>& situations) {
  // Alike situations, as indexes, in order of their first.
  Alike alike{&situations};
  std::unordered_map<size_t, size_t, Alike, Alike> first_of(16, alike, alike);
  std::vector<std::vector<size_t>> alike_groups;
  for (size_t i = 0; i < situations.size(); ++i) {
    if (!situations[i].shown) continue;
    auto [it, added] = first_of.emplace(i, alike_groups.size());
    if (added) alike_groups.emplace_back();
    alike_groups[it->second].push_back(i);
  }
  // Merged by their text keys: one key per group, not per rank.
  std::map<std::string, size_t> by_key;
  std::vector<std::vector<size_t>> merged;
  for (auto& members : alike_groups) {
    auto [it, added] = by_key.emplace(situation_key(situations[members.front()]), merged.size());
    if (added) {
      merged.push_back(std::move(members));
      continue;
    }
    std::vector<size_t>& into = merged[it->second];
    std::vector<size_t> both;
    both.reserve(into.size() + members.size());
    std::merge(into.begin(), into.end(), members.begin(), members.end(), std::back_inserter(both));
    into = std::move(both);
  }
  std::vector<RankGroup> out;
  out.reserve(merged.size());
  for (const auto& members : merged) {
    RankGroup g;
    g.example = members.front();
    g.ranks.reserve(members.size());
    for (size_t i : members) g.ranks.push_back(situations[i].rank);
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace hangshim::report
