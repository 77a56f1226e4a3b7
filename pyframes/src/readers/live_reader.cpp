#include "pyframes/live_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <string>

namespace pyframes {

bool process_exited(int64_t pid) {
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string text;
  if (!stat || !std::getline(stat, text)) return true;
  // "PID (comm) S ...": comm may hold spaces and parentheses, the state follows the last ')'.
  const size_t close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size()) return false;
  const char state = text[close + 2];
  return state == 'Z' || state == 'X';
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
