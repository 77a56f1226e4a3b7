#include "report/inputs/busy_line.h"

#include <time.h>

#include <map>
#include <set>
#include <tuple>

#include "pyframes/live_reader.h"

namespace hangshim::report {

std::optional<BusyLine> sample_busy_line(const Inputs& inputs, const RankView& view, const LibraryPatterns& patterns,
                                         int count, int interval_ms) {
  // The lines it calls NCCL from (each call-site's user frame).
  std::set<std::pair<std::string, int>> in_nccl;
  for (const LocalSite& s : view.sites) {
    if (s.chain == kNoChain) continue;
    const Chain& chain = inputs.chains[s.chain];
    if (chain.frames.empty()) continue;
    const SiteFrame& f = chain.frames[static_cast<size_t>(chain.user >= 0 ? chain.user : 0)];
    in_nccl.emplace(inputs.strings[f.file], f.line);
  }
  pyframes::ReadOptions options;
  options.max_frames = 256;
  std::map<std::tuple<std::string, int, std::string>, size_t> seen;
  size_t outside = 0;
  bool read_any = false;
  for (int i = 0; i < count; ++i) {
    if (i > 0) {
      timespec pause{interval_ms / 1000, static_cast<long>(interval_ms % 1000) * 1000000L};
      while (nanosleep(&pause, &pause) != 0) {
      }
    }
    auto process = pyframes::read_live_process(view.header.pid, options);
    if (!process) continue;
    read_any = true;
    const pyframes::Thread* thread = main_thread(process.value());
    const pyframes::Frame* frame = thread != nullptr ? user_frame(*thread, patterns) : nullptr;
    if (frame == nullptr || in_nccl.count({frame->file, frame->line}) != 0) continue;
    ++outside;
    ++seen[{frame->file, frame->line, frame->function}];
  }
  if (!read_any || seen.empty()) return std::nullopt;
  auto top = seen.begin();
  for (auto it = seen.begin(); it != seen.end(); ++it) {
    if (it->second > top->second) top = it;
  }
  return BusyLine{std::get<0>(top->first), std::get<2>(top->first), std::get<1>(top->first), top->second, outside};
}

}  // namespace hangshim::report
