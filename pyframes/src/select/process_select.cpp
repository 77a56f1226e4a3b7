#include "select/process_select.h"

#include <dirent.h>
#include <regex.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <fmt/format.h>
#include <unordered_map>

#include "process/proc_info.h"

namespace pyframes {

namespace {

std::optional<int64_t> pid_of(const char* name) {
  int64_t pid = 0;
  const char* end = name + std::char_traits<char>::length(name);
  auto [last, ec] = std::from_chars(name, end, pid);
  if (ec != std::errc() || last != end || pid <= 0) return std::nullopt;
  return pid;
}

std::vector<int64_t> all_pids() {
  std::vector<int64_t> pids;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return pids;
  while (dirent* entry = ::readdir(dir)) {
    if (auto pid = pid_of(entry->d_name)) pids.push_back(*pid);
  }
  ::closedir(dir);
  std::sort(pids.begin(), pids.end());
  return pids;
}

}  // namespace

std::vector<ProcessEntry> list_processes() {
  std::vector<ProcessEntry> entries;
  for (int64_t pid : all_pids()) {
    if (auto ppid = proc_parent(pid)) entries.push_back(ProcessEntry{pid, *ppid});
  }
  return entries;
}

std::vector<int64_t> descendants_of(int64_t pid, const std::vector<ProcessEntry>& entries) {
  std::unordered_map<int64_t, std::vector<int64_t>> children;
  for (const ProcessEntry& entry : entries) {
    if (entry.pid != entry.ppid) children[entry.ppid].push_back(entry.pid);
  }
  std::vector<int64_t> out;
  std::vector<int64_t> level{pid};
  while (!level.empty()) {
    std::vector<int64_t> next;
    for (int64_t parent : level) {
      auto found = children.find(parent);
      if (found == children.end()) continue;
      next.insert(next.end(), found->second.begin(), found->second.end());
      children.erase(found);  // a process is visited once even if the table were to loop
    }
    std::sort(next.begin(), next.end());
    out.insert(out.end(), next.begin(), next.end());
    level = std::move(next);
  }
  return out;
}

Result<std::vector<int64_t>> live_descendants(int64_t pid) {
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
    return make_error(ErrorKind::NotFound, fmt::format("no process {}", pid),
                      "pass the PID of a running launcher (pgrep -o torchrun)");
  }
  return descendants_of(pid, list_processes());
}

Result<std::vector<int64_t>> processes_matching(const std::string& pattern, int64_t exclude) {
  regex_t regex;
  if (int code = ::regcomp(&regex, pattern.c_str(), REG_EXTENDED | REG_NOSUB); code != 0) {
    char why[256];
    ::regerror(code, &regex, why, sizeof why);
    return make_error(ErrorKind::Usage, fmt::format("'{}' is not a valid extended regular expression: {}", pattern, why),
                      "see pgrep(1) for the pattern syntax");
  }
  std::vector<int64_t> out;
  for (int64_t pid : all_pids()) {
    if (pid == exclude) continue;
    std::string command;
    for (const std::string& argument : proc_command_line(static_cast<pid_t>(pid))) {
      if (!command.empty()) command += ' ';
      command += argument;
    }
    if (!command.empty() && ::regexec(&regex, command.c_str(), 0, nullptr, 0) == 0) out.push_back(pid);
  }
  ::regfree(&regex);
  return out;
}

}  // namespace pyframes
