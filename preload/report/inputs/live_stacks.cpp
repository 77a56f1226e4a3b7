#include "report/inputs/live_stacks.h"

#include <fmt/format.h>

#include "pyframes/live_reader.h"
#include "pyframes/parallel_read.h"
#include "pyframes/render.h"

namespace hangshim::report {

std::vector<pyframes::Result<pyframes::Process>> read_live_stacks(const std::vector<int64_t>& pids, bool locals) {
  pyframes::ReadOptions options;
  options.max_frames = 256;  // enough to find the user's line; a runaway recursion is cut
  options.locals = locals;
  return pyframes::read_processes(pids, options, &pyframes::read_live_process,
                                       pyframes::default_parallelism());
}

void attach_live_stacks(Inputs& inputs, bool locals) {
  std::vector<int64_t> pids;
  std::vector<size_t> which;
  for (size_t i = 0; i < inputs.ranks.size(); ++i) {
    const RankView& v = inputs.ranks[i];
    if (v.liveness == Liveness::Alive && v.stacks < 0 && v.stack_error.empty()) {
      pids.push_back(v.header.pid);
      which.push_back(i);
    }
  }
  if (pids.empty()) return;
  auto results = read_live_stacks(pids, locals);
  for (size_t k = 0; k < results.size(); ++k) {
    RankView& v = inputs.ranks[which[k]];
    if (results[k]) {
      v.stacks = static_cast<int>(inputs.stacks.size());
      inputs.stacks.push_back(std::move(results[k].value()));
    } else {
      const auto& e = results[k].error();
      v.stack_error = e.hint.empty() ? e.message : fmt::format("{} ({})", e.message, e.hint);
      if (v.stack_error.empty()) v.stack_error = pyframes::default_hint(e.kind);
    }
  }
}

}  // namespace hangshim::report
