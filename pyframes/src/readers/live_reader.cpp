#include "pyframes/live_reader.h"

#include "pyframes/proc_stat.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace pyframes {

bool process_exited(int64_t pid) {
  ProcStat proc;
  if (!read_proc_stat(pid, proc)) return true;
  return proc.state == 'Z' || proc.state == 'X';
}

Result<Process> explain_exit(int64_t pid, Result<Process> result, bool (*exited)(int64_t)) {
  bool incomplete = !result.ok();
  if (result.ok()) {
    const auto& threads = result->threads;
    incomplete = std::any_of(threads.begin(), threads.end(), [](const Thread& t) { return t.truncated; });
  } else if (result.error().kind == ErrorKind::NotFound || result.error().kind == ErrorKind::ProcessGone ||
             result.error().kind == ErrorKind::Usage) {
    return result;  // already says so, or not about the target
  }
  if (incomplete && exited(pid)) {
    return make_error(ErrorKind::ProcessGone, fmt::format("process {} exited while it was being read", pid));
  }
  return result;
}

Result<Process> read_live_process(int64_t pid, const ReadOptions& options) {
  return explain_exit(pid, read_process(pid, options));
}

}  // namespace pyframes
