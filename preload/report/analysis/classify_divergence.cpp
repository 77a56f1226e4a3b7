// Every member issued collective #k, but from different lines of the program: their sequences
// of collectives diverged right here. The shapes that produce this look alike in the ledgers;
// each is decided by the evidence that tells it from the others, and its reason says which:
//   - barrier: some wait in barrier() and the others are in another collective: those never
//     entered the barrier (a barrier skipped on some ranks);
//   - loop body: one side (A) is in call i of its line and every other rank ran that line i-1
//     times. Either A ran one more iteration (the others left the loop and went on to a
//     collective after it), or the others issued a collective inside the same loop, behind
//     rank-dependent control flow, before reaching A's line again. The source tells which:
//     where the two sides' stacks part, whether the others' line lies inside the innermost loop
//     around A's line (outside: one more iteration);
//   - op: the sides issued different operations at #k. With one side a call short inside the
//     loop, the others' own history decides: they issued that operation in earlier steps (a
//     broadcast where they all_reduce first: a swapped order) is an op mismatch; a full
//     iteration and more without it is an extra collective (a gather only two ranks do);
//     otherwise the operations alone make it an op mismatch;
//   - inside the loop, same op: an extra collective on the side one call short;
//   - a side one call short with no source to read: cannot tell, both readings named;
//   - otherwise the smaller side issued a collective the others never issue (Flight
//     Recorder's "extra collective"); on a tie, the line the others passed by (earlier in the
//     same file) is the extra one.
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
  const ledger::CallRecord* record = nullptr;  // one member's record of #k
  const ledger::CallRecord* last = nullptr;    // the last member's: its op names the side
  uint64_t min_iteration = UINT64_MAX;
  uint64_t max_iteration = 0;
  bool barrier = true;  // every record here is a barrier
  std::string op;
};

std::string base_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Where two call-site chains part: the deepest frame they share by function whose lines differ,
// as (file, line in a, line in b). Empty when they part between different functions.
struct Parting {
  std::string file;
  int a_line = 0;
  int b_line = 0;
};

std::optional<Parting> parting(const Analysis& a, size_t va, const ledger::CallRecord& ra, size_t vb,
                               const ledger::CallRecord& rb) {
  const LocalSite* la = a.in.ranks[va].site(ra.callsite);
  const LocalSite* lb = a.in.ranks[vb].site(rb.callsite);
  if (la == nullptr || lb == nullptr || la->chain == kNoChain || lb->chain == kNoChain) return std::nullopt;
  const auto& fa = a.in.chains[la->chain].frames;
  const auto& fb = a.in.chains[lb->chain].frames;
  size_t ia = fa.size(), ib = fb.size();  // walk from the outermost frames in
  while (ia > 0 && ib > 0) {
    const SiteFrame& x = fa[ia - 1];
    const SiteFrame& y = fb[ib - 1];
    if (x.file != y.file || x.function != y.function) return std::nullopt;
    if (x.line != y.line) return Parting{a.in.strings[x.file], x.line, y.line};
    --ia;
    --ib;
  }
  return std::nullopt;
}

// The loop line of a side's call-site (the outermost of its frames shown), for the reasons.
Site loop_line(const Analysis& a, const Side& s) {
  std::vector<Site> chain = a.user_chain(s.views.front(), *s.record);
  return chain.empty() ? a.site_text(s.line, UINT32_MAX) : chain.front();
}

// Whether every one of `views` issued an `op` collective before (the newest record of each of
// its call-sites is kept, so any line that ever issued one shows).
bool issued_op(const Analysis& a, const std::vector<size_t>& views, const std::string& op) {
  return std::all_of(views.begin(), views.end(), [&](size_t v) {
    const auto& records = a.in.ranks[v].records;
    return std::any_of(records.begin(), records.end(), [&](const ledger::CallRecord& r) {
      return r.completed_ns != 0 && ledger::display_op(r) == op;
    });
  });
}

}  // namespace

static std::optional<Finding> divergence(const Analysis& a, const AtSeq& at, bool evidence_only) {
  std::map<SiteKey, Side> by_line;
  for (size_t i = 0; i < at.issued.size(); ++i) {
    const auto* r = at.records[i];
    if (r == nullptr) continue;
    SiteKey key = a.site_key(at.issued[i], *r);
    if (!key.known()) continue;
    Side& side = by_line[key];
    side.line = key;
    side.views.push_back(at.issued[i]);
    if (side.record == nullptr) side.record = r;
    uint64_t iteration = a.iteration_of(at.issued[i], *r);
    side.min_iteration = std::min(side.min_iteration, iteration);
    side.max_iteration = std::max(side.max_iteration, iteration);
    side.barrier = side.barrier && (r->flags & ledger::kRecordBarrier) != 0;
    side.last = r;
  }
  if (by_line.size() < 2) return std::nullopt;
  std::vector<Side> sides;
  for (auto& [key, side] : by_line) {
    side.op = ledger::display_op(*side.last);  // once a side, not a string per member
    sides.push_back(std::move(side));
  }

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

  // A barrier some ranks never entered.
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
    f.reason = fmt::format("evidence: {} wait in barrier() #{}; {} reached collective #{} elsewhere without it",
                           ranks_phrase(f.waiting), at.seq, ranks_phrase(f.culprits), at.seq);
    return f;
  }

  // The loop-body evidence, decided on below: a side in call i of a line every other rank ran i-1
  //    times, and where its stack parts from theirs.
  std::optional<size_t> ahead;  // the side in call i
  uint64_t most = 0;
  for (size_t i = 0; i < sides.size() && sides.size() == 2 && !ahead; ++i) {
    const Side& s = sides[i];
    bool all_ran_fewer = s.min_iteration == s.max_iteration;
    uint64_t ran = 0;
    for (size_t v : sides[1 - i].views) {
      uint64_t hits = a.line_hits(v, s.line);
      ran = std::max(ran, hits);
      if (hits == 0 || hits >= s.min_iteration) all_ran_fewer = false;
    }
    if (all_ran_fewer) {
      ahead = i;
      most = ran;
    }
  }
  enum class Body { Inside, Outside, Unknown } body = Body::Unknown;
  std::optional<Parting> part;
  if (ahead) {
    const Side& s = sides[*ahead];
    const Side& o = sides[1 - *ahead];
    part = parting(a, s.views.front(), *s.record, o.views.front(), *o.record);
    bool readable = false;
    if (part) a.loops().headers(part->file, part->a_line, &readable);
    if (part && readable) {
      body = a.loops().in_same_loop(part->file, part->a_line, part->b_line) ? Body::Inside : Body::Outside;
    }
  }

  // One side ran one more iteration: the others' line is outside the loop around its line.
  if (ahead && body == Body::Outside) {
    const Side& s = sides[*ahead];
    const Site site = loop_line(a, s);
    f.kind = Kind::IterationMismatch;
    f.others_ran = most;
    f.op = s.op;
    f.culprits = ranks_of(a, s.views);
    f.waiting = ranks_of(a, others_of(*ahead));
    f.reason = fmt::format("evidence: {} ran {}:{} {} and went on to {}:{}, outside the loop around it; {} {} in "
                           "call {} from it: one more iteration",
                           ranks_phrase(f.waiting), base_name(site.file), site.line,
                           most == 1 ? std::string("once") : fmt::format("{} times", most), base_name(part->file),
                           part->b_line, ranks_phrase(f.culprits), f.culprits.size() == 1 ? "is" : "are",
                           s.min_iteration);
    return f;
  }

  // Different operations at the same collective number. When one side is a call short inside
  // the loop, the others' history tells a swapped order (they issue that operation in this loop
  // too, in earlier steps) from an extra collective of another kind (a full iteration and more
  // without it: decided below); else the operations alone decide.
  std::map<std::string, std::vector<size_t>> by_op;
  for (const auto& s : sides) by_op[s.op].insert(by_op[s.op].end(), s.views.begin(), s.views.end());
  bool extra_of_another_op = false;
  if (by_op.size() > 1 && ahead && body == Body::Inside) {
    const Side& s = sides[*ahead];
    const Side& o = sides[1 - *ahead];
    if (issued_op(a, s.views, o.op)) {
      f.kind = Kind::OpMismatch;
      f.attribute = "op";
      f.values = {{o.op, ranks_of(a, o.views)}, {s.op, ranks_of(a, s.views)}};
      f.culprits = ranks_of(a, o.views);
      f.waiting = ranks_of(a, s.views);
      f.op = s.op;
      f.reason = fmt::format("evidence: collective #{} is {} on {} but {} on {}, who issue {} in this loop too (in "
                             "earlier steps): the order of collectives differs on {}",
                             at.seq, o.op, ranks_phrase(f.culprits), s.op, ranks_phrase(f.waiting), o.op,
                             ranks_phrase(f.culprits));
      return f;
    }
    extra_of_another_op = true;
  }
  if (by_op.size() > 1 && !extra_of_another_op) {
    std::vector<ValueGroup> ops;
    for (const auto& [op, views] : by_op) ops.push_back({op, ranks_of(a, views)});
    std::string reason;
    f.kind = Kind::OpMismatch;
    f.attribute = "op";
    f.values = ops;
    f.culprits = deviating_ranks(ops, &reason);
    for (const auto& g : ops) {
      if (std::find(f.culprits.begin(), f.culprits.end(), g.ranks.front()) == f.culprits.end()) {
        f.waiting = g.ranks;
        f.op = g.value;
      }
    }
    f.reason = fmt::format("evidence: collective #{} is a different operation on different ranks, issued from "
                           "different lines (the order of collectives differs); {}",
                           at.seq, reason);
    return f;
  }

  // An extra collective in the loop body: the others' line is inside the loop around the line
  // they are one call short of, and the ranks ahead never ran it.
  if (ahead && body == Body::Inside) {
    const Side& s = sides[*ahead];
    const Site site = loop_line(a, s);
    f.kind = Kind::ExtraCollective;
    f.op = s.op;
    f.culprits = ranks_of(a, others_of(*ahead));
    f.waiting = ranks_of(a, s.views);
    f.reason = fmt::format("evidence: {} ran {}:{} {} times, one call short of {}, and then issued a collective from "
                           "{}:{}, inside the same loop ({}:{}), that {} never ran{}: an extra collective behind "
                           "rank-dependent control flow, not an uneven loop",
                           ranks_phrase(f.culprits), base_name(site.file), site.line, most, ranks_phrase(f.waiting),
                           base_name(part->file), part->b_line, base_name(part->file),
                           a.loops().headers(part->file, part->a_line).front(), ranks_phrase(f.waiting),
                           extra_of_another_op ? fmt::format(" (nor any {} in {} steps)", sides[1 - *ahead].op, most)
                                               : std::string());
    return f;
  }
  if (evidence_only) return std::nullopt;
  if (ahead) {  // no source to read: both readings stand
    const Side& s = sides[*ahead];
    const Site site = loop_line(a, s);
    std::vector<int> ahead_ranks = ranks_of(a, s.views), behind = ranks_of(a, others_of(*ahead));
    f.kind = Kind::IterationMismatch;
    f.ambiguous = true;
    f.op = s.op;
    f.others_ran = most;
    f.culprits = ranks_of(a, others_of(SIZE_MAX));
    f.waiting = ahead_ranks;
    f.reason = fmt::format("cannot tell: {} {} in call {} of {}:{}, which {} ran {} times; either {} ran one more "
                           "iteration, or {} issued an extra collective inside that loop (the source that tells them "
                           "apart cannot be read here)",
                           ranks_phrase(ahead_ranks), ahead_ranks.size() == 1 ? "is" : "are", s.min_iteration,
                           base_name(site.file), site.line, ranks_phrase(behind), most, ranks_phrase(ahead_ranks),
                           ranks_phrase(behind));
    return f;
  }

  // An extra collective on the smaller side.
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
    f.reason = fmt::format("the ranks are on different lines and none ran the others' line one time fewer; the "
                           "other {} ranks agree",
                           largest);
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

std::optional<Finding> classify_divergence(const Analysis& a, const AtSeq& at) { return divergence(a, at, false); }

std::optional<Finding> classify_divergence_by_evidence(const Analysis& a, const AtSeq& at) {
  return divergence(a, at, true);
}

}  // namespace hangshim::report
