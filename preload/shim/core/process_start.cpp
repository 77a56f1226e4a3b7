#include "shim/core/process_start.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace hangshim::shim {

uint64_t process_start_ticks(int64_t pid) noexcept {
  if (pid <= 0) return 0;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%lld/stat", static_cast<long long>(pid));
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char text[1024];
  ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (n <= 0) return 0;
  text[n] = '\0';
  // The name (field 2) may hold spaces and parentheses: fields 3.. follow the last ')'.
  const char* p = std::strrchr(text, ')');
  if (p == nullptr) return 0;
  ++p;
  for (int field = 3; field < 22; ++field) {
    while (*p == ' ') ++p;
    while (*p != ' ' && *p != '\0') ++p;
    if (*p == '\0') return 0;
  }
  return std::strtoull(p, nullptr, 10);
}

}  // namespace hangshim::shim
