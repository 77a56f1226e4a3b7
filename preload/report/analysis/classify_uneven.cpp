// Uneven steps with one side outside NCCL (the DistributedSampler story, when the ranks that ran
// out of data have left the loop): the ranks in collective #k are in call i of a call-site, the
// ranks that never issued #k ran that same call-site i-1 times and are outside NCCL. Nobody is
// stuck in the program: one side ran one loop iteration more than the other. The odd side is
// the one whose step count differs from the rest, whichever side is in NCCL:
//   - the side in NCCL is smaller: it ran one iteration more;
//   - the side outside is smaller and its live stacks show it left the loop (the function
//     holding the loop is on none of their stacks): it ran one iteration fewer;
//   - as many ranks on each side: the step counts cannot tell who is wrong, and the finding
//     says so (ambiguous) instead of picking one.
// A side outside NCCL whose stacks are still in the loop's function is stuck in that iteration
// (data loading, I/O): that is classify_missing's stuck_outside_nccl, left as it is; so are
// exited and dead ranks (a crash at step i looks the same in the ledgers).
#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "report/analysis/classify.h"
#include "report/analysis/rank_ranges.h"

namespace hangshim::report {

namespace {

enum class LoopEvidence { Inside, Left, Unknown };

// Where a rank outside NCCL is relative to the loop that issues the call-site: its main thread's
// stack against the loop holder (the outermost frame of the call-site whose line sits inside a
// loop, user_chain.cpp). Not on the stack: it left the loop. On the stack at a line inside that
// same loop (fetching the next batch, writing a log): still inside, stuck in that iteration. On
// the stack at a line after the loop (the evaluation at the end of fit()): left. Without
// readable source, the holder's function on the stack counts as inside, as before.
LoopEvidence loop_evidence(const Analysis& a, size_t view, const Site& holder) {
  int stacks = a.in.ranks[view].stacks;
  if (stacks < 0) return LoopEvidence::Unknown;
  const pyframes::Thread* t = main_thread(a.in.stacks[static_cast<size_t>(stacks)]);
  if (t == nullptr || t->frames.empty()) return LoopEvidence::Unknown;
  for (const auto& f : t->frames) {
    if (f.kind != pyframes::Frame::Kind::Python || f.file != holder.file) continue;
    if (f.function != holder.function && f.qualname != holder.function) continue;
    bool readable = false;
    a.loops().headers(holder.file, holder.line, &readable);
    if (!readable || a.loops().in_same_loop(holder.file, holder.line, f.line)) return LoopEvidence::Inside;
    return LoopEvidence::Left;
  }
  return LoopEvidence::Left;
}

}  // namespace

bool decide_uneven_steps(const Analysis& a, Finding& f) {
  if (!f.never_issued || f.waiting.empty() || f.culprits.empty()) return false;
  // The ranks in #k: all in the same call-site, at the same iteration i > 1.
  SiteKey key;
  uint64_t iteration = 0;
  std::optional<Site> loop_frame;
  std::string op;
  for (int r : f.waiting) {
    size_t view = a.view_of(r);
    const ledger::CallRecord* record = view == SIZE_MAX ? nullptr : a.collective_at(view, f.comm, f.seq);
    if (record == nullptr) return false;
    SiteKey k = a.site_key(view, *record);
    if (!k.known()) return false;
    if (!loop_frame) {
      key = k;
      iteration = a.iteration_of(view, *record);
      loop_frame = a.loop_holder(view, *record);
      if (!loop_frame) {
        std::vector<Site> chain = a.user_chain(view, *record);
        loop_frame = chain.empty() ? a.site(view, *record) : chain.front();
      }
      op = ledger::display_op(*record);
    } else if (!(k == key) || a.iteration_of(view, *record) != iteration) {
      return false;
    }
  }
  if (iteration < 2 || !loop_frame) return false;
  // The others: alive outside NCCL, having run that call-site exactly i-1 times.
  size_t inside = 0, left = 0;
  for (int r : f.culprits) {
    const RankSituation* s = a.situation_of(r);
    size_t view = a.view_of(r);
    if (s == nullptr || s->state != RankState::OutsideNccl) return false;
    if (a.line_hits(view, key) != iteration - 1) return false;
    LoopEvidence e = loop_evidence(a, view, *loop_frame);
    inside += e == LoopEvidence::Inside ? 1 : 0;
    left += e == LoopEvidence::Left ? 1 : 0;
  }
  if (inside > 0) return false;  // still in the loop's function: stuck in that iteration
  // The step counts are the whole job's: every rank is either in NCCL (one iteration further:
  // in this call, or in another communicator's collective of that same step) or outside it (one
  // fewer; a rank outside a sub-communicator never runs its call-site, it left the loop all the
  // same). Anything else (a rank dead, exited, joining a communicator) is another story.
  std::vector<int> in_nccl, outside;
  for (const auto& s : a.situations) {
    if (s.state == RankState::InCollective || s.state == RankState::InP2P) {
      in_nccl.push_back(s.rank);
    } else if (s.state == RankState::OutsideNccl) {
      outside.push_back(s.rank);
    } else {
      return false;
    }
  }
  auto includes = [](const std::vector<int>& all, const std::vector<int>& part) {
    return std::includes(all.begin(), all.end(), part.begin(), part.end());
  };
  if (!includes(in_nccl, f.waiting) || !includes(outside, f.culprits)) return false;
  enum class Odd { More, Fewer, Unknown } odd;
  if (in_nccl.size() < outside.size()) {
    odd = Odd::More;
  } else if (outside.size() < in_nccl.size()) {
    // Fewer steps, or stuck in the last one: only stacks out of the loop tell.
    if (left != f.culprits.size() || outside != f.culprits) return false;
    odd = Odd::Fewer;
  } else {
    odd = Odd::Unknown;
  }
  // The loop line (the outermost of the call-site's frames shown), as the headline names it.
  Site loop_line = a.site_text(key, UINT32_MAX);
  {
    size_t view = a.view_of(f.waiting.front());
    const ledger::CallRecord* record = a.collective_at(view, f.comm, f.seq);
    std::vector<Site> chain = record != nullptr ? a.user_chain(view, *record) : std::vector<Site>();
    if (!chain.empty()) loop_line = chain.front();
  }
  size_t slash = loop_line.file.rfind('/');
  const std::string site = fmt::format(
      "{}:{}", slash == std::string::npos ? loop_line.file : loop_line.file.substr(slash + 1), loop_line.line);
  f.kind = Kind::IterationMismatch;
  f.attribute = "steps";
  f.op = op;
  f.others_ran = iteration - 1;
  f.never_issued = false;
  // Both decided cases cite the same evidence; only which side ran the odd iteration differs.
  const auto evidence = [&](std::string_view more_or_fewer) {
    return fmt::format("evidence: {} ran the call-site at {} {} times and left the loop (their stacks are out of "
                       "it); {} {} in call {} from it: the smaller side ran one iteration {}",
                       ranks_phrase(outside), site, iteration - 1, ranks_phrase(in_nccl),
                       in_nccl.size() == 1 ? "is" : "are", iteration, more_or_fewer);
  };
  switch (odd) {
    case Odd::More:
      f.culprits = in_nccl;
      f.waiting = outside;
      f.reason = evidence("more");
      break;
    case Odd::Fewer:  // culprits and waiting stay: the ranks outside, the ranks in this call
      f.fewer = true;
      f.reason = evidence("fewer");
      break;
    case Odd::Unknown:
      f.ambiguous = true;
      f.culprits = in_nccl;
      f.culprits.insert(f.culprits.end(), outside.begin(), outside.end());
      std::sort(f.culprits.begin(), f.culprits.end());
      f.waiting = in_nccl;
      f.values = {{fmt::format("in call {} of {}", iteration, site), in_nccl},
                  {fmt::format("ran {} {} times and left it", site, iteration - 1), outside}};
      f.reason = "as many ranks on each side: the step counts cannot tell whether one side ran one iteration more or "
                 "the other one fewer";
      break;
  }
  return true;
}

}  // namespace hangshim::report
