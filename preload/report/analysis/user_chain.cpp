// Which of your frames name a call-site, and which of them is the loop line. Most jobs call
// NCCL through helpers of their own (a `reduce_tensor()` in utils, a `Comm.all_reduce` method, a
// `_sync_grads` wrapper called from one place, a binding -> communicator -> mapping stack): the
// first frame outside the libraries is the same for many collectives and says nothing about
// which loop hangs. The loop line is decided by evidence from the source the frames name:
//   - the loop holder is the outermost frame (yours or a library's) whose line sits inside a
//     `for`/`while` of its function: it runs once per iteration, the frames above it once;
//   - the loop line is the outermost of your frames at or below the holder (a Lightning- or
//     Trainer-style library loop calls your hook: the hook's line), or, when the library loop
//     calls none of yours on this path, your innermost frame (the line that started it).
// Without readable source the old evidence decides: a frame whose function is reached along
// more than one path of callers is a helper and its caller is shown too.
// The chain shown, and the key that counts iterations, hold your frames only, from the first
// one out to the loop line: library frames never key an iteration count (an engine whose
// internal branch changes from step to step keeps one count for your line).
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "report/analysis/analysis.h"

namespace hangshim::report {

namespace {

using FunctionKey = std::pair<uint32_t, uint32_t>;  // file, function

constexpr size_t kMostFrames = 16;  // the shim's default depth: every frame it captured

}  // namespace

void Analysis::trace_user_chains() {
  const ChainPool& pool = in.chains;
  // The paths of callers each of your functions is reached along, over all call-sites of all
  // ranks (the frames outside it, as text): the fallback evidence without source.
  std::map<FunctionKey, std::set<std::string>> callers;
  for (uint32_t id = 0; id < pool.size(); ++id) {
    const Chain& chain = pool[id];
    std::string outside;  // the frames outside frame i, outermost first
    for (size_t i = chain.frames.size(); i-- > 0;) {
      const SiteFrame& f = chain.frames[i];
      if (!f.library) callers[{f.file, f.function}].insert(outside);
      outside += std::to_string(f.file) + ":" + std::to_string(f.line) + "|";
    }
  }
  auto is_helper = [&](const SiteFrame& f) {
    auto it = callers.find({f.file, f.function});
    return it != callers.end() && it->second.size() > 1;
  };
  user_frames_.assign(pool.size(), {});
  chain_paths_.assign(pool.size(), UINT32_MAX);
  loop_holders_.assign(pool.size(), -1);
  std::map<std::string, uint32_t> paths;
  for (uint32_t id = 0; id < pool.size(); ++id) {
    const Chain& chain = pool[id];
    if (chain.frames.empty()) continue;
    const int first = chain.user >= 0 ? chain.user : 0;
    // The loop holder: the outermost frame whose line is inside a loop of its function.
    int holder = -1;
    for (size_t i = chain.frames.size(); i-- > 0;) {
      const SiteFrame& f = chain.frames[i];
      const std::string& file = in.strings[f.file];
      if (file.empty() || file[0] == '<') continue;
      if (loops_.in_loop(file, f.line)) {
        holder = static_cast<int>(i);
        break;
      }
    }
    loop_holders_[id] = holder;
    int loop_line = -1;
    if (holder >= 0) {
      for (int i = holder; i >= first; --i) {
        if (!chain.frames[static_cast<size_t>(i)].library) {
          loop_line = i;
          break;
        }
      }
      if (loop_line < 0) loop_line = first;  // the library loop calls none of yours on this path
    } else {
      loop_line = first;
      for (size_t at = static_cast<size_t>(first); at + 1 < chain.frames.size(); ++at) {
        if (chain.frames[at + 1].library || !is_helper(chain.frames[at])) break;
        loop_line = static_cast<int>(at + 1);
      }
    }
    std::vector<int>& shown = user_frames_[id];
    for (int i = first; i <= loop_line && shown.size() < kMostFrames; ++i) {
      if (!chain.frames[static_cast<size_t>(i)].library || i == first) shown.push_back(i);
    }
    if (shown.size() < 2) continue;  // the line alone names it: SiteKey::path stays "that line alone"
    std::string text;
    for (int i : shown) {
      const SiteFrame& f = chain.frames[static_cast<size_t>(i)];
      text += std::to_string(f.file) + ":" + std::to_string(f.line) + "|";
    }
    auto [it, added] = paths.emplace(text, static_cast<uint32_t>(paths.size()));
    chain_paths_[id] = it->second;
  }
  // Each chain's key ("your line" and the path to it), looked up for every record of every rank.
  chain_keys_.assign(pool.size(), SiteKey{});
  for (uint32_t id = 0; id < pool.size(); ++id) {
    const Chain& chain = pool[id];
    if (chain.frames.empty()) continue;
    const SiteFrame& f = chain.frames[static_cast<size_t>(chain.user >= 0 ? chain.user : 0)];
    chain_keys_[id] = {f.file, f.line, chain_paths_[id]};
  }
}

const std::vector<int>& Analysis::user_frames(uint32_t chain) const {
  static const std::vector<int> none;
  return chain < user_frames_.size() ? user_frames_[chain] : none;
}

std::optional<Site> Analysis::loop_holder(size_t view, const ledger::CallRecord& record) const {
  const LocalSite* local = in.ranks[view].site(record.callsite);
  if (local == nullptr || local->chain == kNoChain || local->chain >= loop_holders_.size()) return std::nullopt;
  int holder = loop_holders_[local->chain];
  if (holder < 0) return std::nullopt;
  const SiteFrame& f = in.chains[local->chain].frames[static_cast<size_t>(holder)];
  return Site{in.strings[f.file], in.strings[f.function], f.line};
}

uint64_t Analysis::iteration_of(size_t view, const ledger::CallRecord& record) const {
  SiteKey key = site_key(view, record);
  if (!key.known()) return record.callsite_hit;
  // Calls through the key so far, less those this rank issued through it after this record (the
  // newest calls: the ring holds them whenever it still holds this one).
  uint64_t hits = line_hits(view, key);
  const auto& records = in.ranks[view].records;
  size_t from = 0;  // in ring order, the records after this one are those at its right
  bool ours = std::greater_equal<const ledger::CallRecord*>()(&record, records.data()) &&
              std::less<const ledger::CallRecord*>()(&record, records.data() + records.size());
  if (ours && view < record_marks_.size() && has_records(view, kInRingOrder)) {
    from = static_cast<size_t>(&record - records.data()) + 1;
  }
  for (size_t k = from; k < records.size(); ++k) {
    const ledger::CallRecord& later = records[k];
    if (later.index > record.index && later.callsite != 0 && site_key(view, later) == key && hits > 0) --hits;
  }
  return hits;
}

size_t Analysis::view_of(int rank) const {
  // The views' ranks, in order, packed apart from the views (a few hundred bytes each): a search
  // among 131 072 ranks stays in cache.
  auto it = std::lower_bound(view_ranks_.begin(), view_ranks_.end(), rank);
  return it != view_ranks_.end() && *it == rank ? static_cast<size_t>(it - view_ranks_.begin()) : SIZE_MAX;
}

const RankSituation* Analysis::situation_of(int rank) const {
  size_t view = view_of(rank);
  return view < situations.size() ? &situations[view] : nullptr;
}

}  // namespace hangshim::report
