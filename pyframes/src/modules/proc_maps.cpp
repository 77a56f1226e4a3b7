#include "pyframes/proc_maps.h"

#include "pyframes/proc_stat.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

namespace pyframes {

std::vector<Mapping> parse_proc_maps(const std::string& text) {
  std::vector<Mapping> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    // start-end perms offset dev inode [path]
    uint64_t start = 0, end = 0, offset = 0;
    char perms[8] = {};
    int path_at = -1;
    if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &start, &end, perms, &offset,
                    &path_at) < 4) {
      continue;
    }
    Mapping m;
    m.start = start;
    m.end = end;
    m.file_offset = offset;
    m.readable = perms[0] == 'r';
    m.writable = perms[1] == 'w';
    m.executable = perms[2] == 'x';
    if (path_at > 0 && static_cast<size_t>(path_at) < line.size()) {
      m.path = line.substr(static_cast<size_t>(path_at));
      static constexpr const char kDeleted[] = " (deleted)";
      if (m.path.size() > sizeof kDeleted - 1 &&
          m.path.compare(m.path.size() - (sizeof kDeleted - 1), sizeof kDeleted - 1, kDeleted) == 0) {
        m.path.resize(m.path.size() - (sizeof kDeleted - 1));
      }
    }
    out.push_back(std::move(m));
  }
  return out;
}

Result<ModuleMap> read_proc_maps(pid_t pid) {
  std::string path = fmt::format("/proc/{}/maps", pid);
  std::FILE* file = std::fopen(path.c_str(), "re");
  if (file == nullptr) {
    int error = errno;
    if (error == ENOENT) return make_error(ErrorKind::NotFound, fmt::format("no process {}", pid), "check the PID");
    if (error == EACCES || error == EPERM) {
      return make_error(ErrorKind::PermissionDenied, fmt::format("cannot read {}: {}", path, std::strerror(error)),
                        "run as the same user or root, or echo 0 > /proc/sys/kernel/yama/ptrace_scope, or grant "
                        "CAP_SYS_PTRACE");
    }
    return make_error(ErrorKind::Io, fmt::format("cannot read {}: {}", path, std::strerror(error)));
  }
  std::string text;
  char buffer[16384];
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof buffer, file)) > 0) text.append(buffer, got);
  bool failed = std::ferror(file) != 0;
  int error = errno;
  std::fclose(file);
  if (failed) {
    if (error == ESRCH) return make_error(ErrorKind::ProcessGone, fmt::format("process {} exited", pid));
    return make_error(ErrorKind::Io, fmt::format("cannot read {}: {}", path, std::strerror(error)));
  }
  if (text.empty()) {
    // A zombie (exited, not yet reaped) or a kernel thread has no mappings.
    ProcStat proc;  // unreadable: gone too
    const char state = read_proc_stat(pid, proc) ? proc.state : '?';
    if (state == 'Z' || state == 'X' || state == '?') {
      return make_error(ErrorKind::ProcessGone, fmt::format("process {} has exited", pid));
    }
    return make_error(ErrorKind::NotPython, fmt::format("process {} has no memory mappings (a kernel thread)", pid),
                      "point pyframes at a Python process");
  }
  return ModuleMap(parse_proc_maps(text));
}

FileResolver proc_root_resolver(pid_t pid) {
  std::string root = fmt::format("/proc/{}/root", pid);
  return [root](const std::string& target_path) -> std::string {
    if (target_path.empty() || target_path.front() != '/') return target_path;
    std::string via_root = root + target_path;
    struct stat st;
    if (::stat(via_root.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return via_root;
    return target_path;
  };
}

}  // namespace pyframes
