#include "pyframes/proc_stat.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>

namespace pyframes {

namespace {

// The whole stat line fits: 52 numeric fields and a comm of at most 16 bytes.
constexpr size_t kStatBytes = 1024;

bool read_stat_file(const char* path, ProcStat& out) noexcept {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char text[kStatBytes];
  ssize_t n;
  do {
    n = ::read(fd, text, sizeof text);
  } while (n < 0 && errno == EINTR);
  ::close(fd);
  if (n <= 0) return false;
  return parse_proc_stat(std::string_view(text, static_cast<size_t>(n)), out);
}

}  // namespace

bool parse_proc_stat(std::string_view text, ProcStat& out) noexcept {
  size_t close = text.rfind(')');
  if (close == std::string_view::npos) return false;
  const char* p = text.data() + close + 1;
  const char* end = text.data() + text.size();
  ProcStat parsed;
  for (int field = 3; field <= 22; ++field) {
    while (p < end && *p == ' ') ++p;
    if (p == end || *p == '\n') return false;
    const char* next = p;
    while (next < end && *next != ' ' && *next != '\n') ++next;
    if (field == 3) parsed.state = *p;
    if (field == 4) std::from_chars(p, next, parsed.ppid);
    if (field == 22) std::from_chars(p, next, parsed.start_ticks);
    p = next;
  }
  out = parsed;
  return true;
}

bool read_proc_stat(int64_t pid, ProcStat& out) noexcept {
  if (pid <= 0) return false;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%lld/stat", static_cast<long long>(pid));
  return read_stat_file(path, out);
}

bool read_thread_stat(int64_t pid, int64_t tid, ProcStat& out) noexcept {
  if (pid <= 0 || tid <= 0) return false;
  char path[96];
  std::snprintf(path, sizeof path, "/proc/%lld/task/%lld/stat", static_cast<long long>(pid), static_cast<long long>(tid));
  return read_stat_file(path, out);
}

}  // namespace pyframes
