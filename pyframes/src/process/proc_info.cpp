#include "process/proc_info.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fmt/format.h>

#include "pyframes/proc_stat.h"
#include "text/split.h"

namespace pyframes {

std::optional<std::string> read_proc_text(const std::string& path, size_t max) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buffer[4096];
  while (text.size() < max) {
    ssize_t got = ::read(fd, buffer, std::min(sizeof buffer, max - text.size()));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    text.append(buffer, static_cast<size_t>(got));
  }
  ::close(fd);
  return text;
}

std::optional<int64_t> proc_parent(int64_t pid) {
  ProcStat proc;
  if (!read_proc_stat(pid, proc)) return std::nullopt;
  return proc.ppid;
}

std::string proc_executable(pid_t pid) {
  char buffer[4096];
  std::string link = fmt::format("/proc/{}/exe", pid);
  ssize_t n = ::readlink(link.c_str(), buffer, sizeof buffer - 1);
  if (n <= 0) return {};
  std::string path(buffer, static_cast<size_t>(n));
  static constexpr std::string_view kDeleted = " (deleted)";
  if (path.size() > kDeleted.size() && path.compare(path.size() - kDeleted.size(), kDeleted.size(), kDeleted) == 0) {
    path.resize(path.size() - kDeleted.size());
  }
  return path;
}

std::vector<std::string> proc_command_line(pid_t pid) {
  auto text = read_proc_text(fmt::format("/proc/{}/cmdline", pid));
  return text ? pyframes::text::split(*text, '\0') : std::vector<std::string>{};
}

namespace {

std::optional<std::string> read_environment(pid_t pid) {
  return read_proc_text(fmt::format("/proc/{}/environ", pid), 1 << 22);
}

std::optional<std::string> environment_value(std::string_view environment, std::string_view name) {
  while (!environment.empty()) {
    const size_t end = std::min(environment.find('\0'), environment.size());
    const std::string_view entry = environment.substr(0, end);
    if (entry.size() > name.size() && entry[name.size()] == '=' && entry.starts_with(name)) {
      return std::string(entry.substr(name.size() + 1));
    }
    environment.remove_prefix(std::min(end + 1, environment.size()));
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> proc_environment_variable(pid_t pid, const std::string& name) {
  auto text = read_environment(pid);
  if (!text) return std::nullopt;
  return environment_value(*text, name);
}

std::pair<std::string, std::string> proc_rank_and_local_rank(pid_t pid) {
  auto text = read_environment(pid);
  if (!text) return {};
  return {environment_value(*text, "RANK").value_or(""), environment_value(*text, "LOCAL_RANK").value_or("")};
}

std::vector<pid_t> proc_thread_ids(pid_t pid) {
  std::vector<pid_t> out;
  std::string path = fmt::format("/proc/{}/task", pid);
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return out;
  while (dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    long tid = std::strtol(entry->d_name, &end, 10);
    if (end != entry->d_name && *end == '\0' && tid > 0) out.push_back(static_cast<pid_t>(tid));
  }
  ::closedir(dir);
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<std::string> proc_thread_name(pid_t pid, pid_t tid) {
  auto text = read_proc_text(fmt::format("/proc/{}/task/{}/comm", pid, tid), 64);
  if (!text) return std::nullopt;
  while (!text->empty() && (text->back() == '\n' || text->back() == '\0')) text->pop_back();
  return text;
}

std::optional<char> proc_thread_state(pid_t pid, pid_t tid) {
  ProcStat proc;
  if (!read_thread_stat(pid, tid, proc)) return std::nullopt;
  return proc.state;
}

void add_proc_thread_details(pid_t pid, Process& process) {
  std::vector<pid_t> tids = proc_thread_ids(pid);
  for (auto& thread : process.threads) {
    if (thread.native_id != 0 &&
        !std::binary_search(tids.begin(), tids.end(), static_cast<pid_t>(thread.native_id))) {
      thread.native_id = 0;
    }
    if (thread.native_id == 0) continue;
    auto tid = static_cast<pid_t>(thread.native_id);
    if (thread.name.empty()) {
      if (auto name = proc_thread_name(pid, tid)) thread.name = *name;
    }
  }
}

}  // namespace pyframes
