// Every member issued collective #k, but from different lines of the program: their sequences
// of collectives diverged right here. Three stories, tried in this order:
//   1. some wait in barrier() and the others are in another collective: those never entered
//      the barrier (a barrier skipped on some ranks);
//   2. some are in the (i)th call from a line the others also ran, but only 1..i-1 times before
//      moving on: they ran more loop iterations (uneven data: the DistributedSampler story);
//   3. otherwise the smaller side issued a collective the others never issue (Flight
//      Recorder's "extra collective"); on a tie, the line the others passed by (earlier in the
//      same file) is the extra one.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "report/analysis/classify.h"
#include "report/analysis/rank_ranges.h"

namespace hangshim::report {

namespace {

struct Side {
  SiteKey line;
  std::vector<size_t> views;
  uint64_t min_iteration = UINT64_MAX;
  uint64_t max_iteration = 0;
  bool barrier = true;  // every record here is a barrier
  std::string op;
};

std::string base_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::optional<Finding> classify_divergence(const Analysis& a, const AtSeq& at) {
  std::map<SiteKey, Side> by_line;
  for (size_t i = 0; i < at.issued.size(); ++i) {
    const auto* r = at.records[i];
    if (r == nullptr) continue;
    SiteKey key = a.site_key(at.issued[i], *r);
    if (!key.known()) continue;
    Side& side = by_line[key];
    side.line = key;
    side.views.push_back(at.issued[i]);
    side.min_iteration = std::min(side.min_iteration, r->callsite_hit);
    side.max_iteration = std::max(side.max_iteration, r->callsite_hit);
    side.barrier = side.barrier && (r->flags & ledger::kRecordBarrier) != 0;
    side.op = ledger::display_op(*r);
  }
  if (by_line.size() < 2) return std::nullopt;
  std::vector<Side> sides;
  for (auto& [key, side] : by_line) sides.push_back(std::move(side));

  Finding f;
  f.comm = at.comm;
  f.seq = at.seq;
  f.attribute = "line";
  for (const auto& s : sides) {
    const Site site = a.site_text(s.line, UINT32_MAX);
    std::string iterations = s.min_iteration == s.max_iteration ? fmt::format("{}", s.min_iteration)
                                                                : fmt::format("{}-{}", s.min_iteration, s.max_iteration);
    f.values.push_back({fmt::format("{} at {}:{} (iteration {})", s.op, site.file, site.line, iterations),
                        ranks_of(a, s.views)});
  }
  auto others_of = [&](size_t keep) {
    std::vector<size_t> out;
    for (size_t i = 0; i < sides.size(); ++i) {
      if (i != keep) out.insert(out.end(), sides[i].views.begin(), sides[i].views.end());
    }
    return out;
  };

  // 1. A barrier some ranks never entered.
  std::vector<size_t> at_barrier, elsewhere;
  for (const auto& s : sides) {
    auto& into = s.barrier ? at_barrier : elsewhere;
    into.insert(into.end(), s.views.begin(), s.views.end());
  }
  if (!at_barrier.empty() && !elsewhere.empty()) {
    f.kind = Kind::MissingRank;
    f.op = "barrier";
    f.culprits = ranks_of(a, elsewhere);
    f.waiting = ranks_of(a, at_barrier);
    f.reason = fmt::format("{} wait in barrier() #{}; {} reached collective #{} elsewhere without it",
                           ranks_phrase(f.waiting), at.seq, ranks_phrase(f.culprits), at.seq);
    return f;
  }

  // 2. More iterations of a line the others left.
  for (size_t i = 0; i < sides.size(); ++i) {
    const Side& s = sides[i];
    std::vector<size_t> others = others_of(i);
    uint64_t most = 0;
    bool all_ran_fewer = !others.empty();
    for (size_t v : others) {
      uint64_t hits = a.line_hits(v, s.line);
      most = std::max(most, hits);
      if (hits == 0 || hits >= s.min_iteration) all_ran_fewer = false;
    }
    if (!all_ran_fewer) continue;
    const Site site = a.site_text(s.line, UINT32_MAX);
    f.kind = Kind::IterationMismatch;
    f.others_ran = most;
    f.op = s.op;
    f.culprits = ranks_of(a, s.views);
    f.waiting = ranks_of(a, others);
    f.reason = fmt::format("{} ran {}:{} {}{} and went on; {} {} in call {} from it", ranks_phrase(f.waiting),
                           base_name(site.file), site.line, most == 1 ? "once" : fmt::format("{}", most),
                           most == 1 ? "" : " times", ranks_phrase(f.culprits), f.culprits.size() == 1 ? "is" : "are",
                           s.min_iteration);
    return f;
  }

  // 3. An extra collective on the smaller side.
  size_t largest = 0;
  for (const auto& s : sides) largest = std::max(largest, s.views.size());
  size_t reference = SIZE_MAX;
  std::vector<size_t> tied;
  for (size_t i = 0; i < sides.size(); ++i) {
    if (sides[i].views.size() == largest) tied.push_back(i);
  }
  bool same_file = std::all_of(tied.begin(), tied.end(), [&](size_t i) { return sides[i].line.file == sides[tied[0]].line.file; });
  if (tied.size() == 1) {
    reference = tied[0];
    f.reason = fmt::format("the other {} ranks agree", largest);
  } else if (same_file) {
    reference = *std::max_element(tied.begin(), tied.end(), [&](size_t x, size_t y) { return sides[x].line.line < sides[y].line.line; });
    f.reason = "as many ranks on each side: the line the others passed by (earlier in the file) is taken as the extra one";
  } else {
    reference = *std::min_element(tied.begin(), tied.end(), [&](size_t x, size_t y) {
      return ranks_of(a, sides[x].views).front() < ranks_of(a, sides[y].views).front();
    });
    f.reason = "as many ranks on each side: the side with the lowest rank is taken as the reference";
  }
  std::vector<size_t> extra = others_of(reference);
  f.kind = Kind::ExtraCollective;
  f.culprits = ranks_of(a, extra);
  f.waiting = ranks_of(a, sides[reference].views);
  f.op = sides[reference == 0 ? 1 : 0].op;  // the extra collective's
  return f;
}

}  // namespace hangshim::report
