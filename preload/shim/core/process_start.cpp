#include "shim/core/process_start.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace hangshim::shim {

bool read_process_stat(int64_t pid, ProcessStat& out) noexcept {
  if (pid <= 0) return false;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%lld/stat", static_cast<long long>(pid));
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char text[1024];
  ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (n <= 0) return false;
  text[n] = '\0';
  // "pid (comm) state ppid ...": the name may hold spaces and parentheses, so fields 3.. are
  // counted from the last ')'.
  const char* p = std::strrchr(text, ')');
  if (p == nullptr) return false;
  ++p;
  for (int field = 3; field <= 22; ++field) {
    while (*p == ' ') ++p;
    if (*p == '\0') return false;
    if (field == 3) out.state = *p;
    if (field == 4) out.ppid = std::strtoll(p, nullptr, 10);
    if (field == 22) out.start_ticks = std::strtoull(p, nullptr, 10);
    while (*p != ' ' && *p != '\0') ++p;
  }
  return true;
}

uint64_t process_start_ticks(int64_t pid) noexcept {
  ProcessStat stat;
  return read_process_stat(pid, stat) ? stat.start_ticks : 0;
}

}  // namespace hangshim::shim
