#include "pyframes/proc_maps.h"

#include "modules/maps_line.h"
#include "pyframes/proc_stat.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <optional>
#include <string_view>

namespace pyframes {

namespace {

// One line: start-end perms offset dev inode [path] (maps_line.h; by hand rather than sscanf: a
// process has hundreds of mappings and every dump reads them all).
std::optional<Mapping> parse_line(std::string_view line) {
  MapsLine fields;
  if (!parse_maps_line(line, fields)) return std::nullopt;
  Mapping m;
  m.start = fields.start;
  m.end = fields.end;
  m.file_offset = fields.file_offset;
  m.readable = fields.readable;
  m.writable = fields.writable;
  m.executable = fields.executable;
  m.path = std::string(fields.path);
  return m;
}

}  // namespace

std::vector<Mapping> parse_proc_maps(const std::string& text) {
  std::vector<Mapping> out;
  out.reserve(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
  std::string_view rest = text;
  while (!rest.empty()) {
    const size_t end = std::min(rest.find('\n'), rest.size());
    if (auto mapping = parse_line(rest.substr(0, end))) out.push_back(std::move(*mapping));
    rest.remove_prefix(std::min(end + 1, rest.size()));
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
