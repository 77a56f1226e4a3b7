// Which of your frames name a call-site. Most jobs call NCCL through a helper of their own (a
// `reduce_tensor()` in utils, a `Comm.all_reduce` method): its line is the first frame outside
// the libraries for every collective of the job, and says nothing about which one hangs. A frame
// is a helper when its function is reached along more than one path of callers (the frames
// outside it differ between call-sites: called from two lines, or from a helper that is); the
// chain then goes on to its caller, until a frame reached along one path only (the loop line the
// user must look at), at most three frames (a wrapper two levels deep and the loop that calls
// it). The shim captured the frames (HANGSHIM_CALLSITE_DEPTH); library frames never join.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "report/analysis/analysis.h"

namespace hangshim::report {

namespace {

constexpr size_t kMostFrames = 3;

using FunctionKey = std::pair<uint32_t, uint32_t>;  // file, function

}  // namespace

void Analysis::trace_user_chains() {
  const ChainPool& pool = in.chains;
  // The paths of callers each of your functions is reached along, over all call-sites of all
  // ranks (the frames outside it, as text).
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
  std::map<std::string, uint32_t> paths;
  for (uint32_t id = 0; id < pool.size(); ++id) {
    const Chain& chain = pool[id];
    if (chain.frames.empty()) continue;
    int first = chain.user >= 0 ? chain.user : 0;
    std::vector<int>& shown = user_frames_[id];
    shown.push_back(first);
    for (size_t at = static_cast<size_t>(first); shown.size() < kMostFrames && at + 1 < chain.frames.size(); ++at) {
      if (chain.frames[at + 1].library || !is_helper(chain.frames[at])) break;
      shown.push_back(static_cast<int>(at + 1));
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
}

const std::vector<int>& Analysis::user_frames(uint32_t chain) const {
  static const std::vector<int> none;
  return chain < user_frames_.size() ? user_frames_[chain] : none;
}

size_t Analysis::view_of(int rank) const {
  auto it = std::lower_bound(in.ranks.begin(), in.ranks.end(), rank, [](const RankView& v, int r) { return v.rank < r; });
  return it != in.ranks.end() && it->rank == rank ? static_cast<size_t>(it - in.ranks.begin()) : SIZE_MAX;
}

const RankSituation* Analysis::situation_of(int rank) const {
  size_t view = view_of(rank);
  return view < situations.size() ? &situations[view] : nullptr;
}

}  // namespace hangshim::report
