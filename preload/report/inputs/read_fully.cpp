#include "report/inputs/read_fully.h"

#include <unistd.h>

#include <cerrno>

namespace hangshim::report {

size_t read_fully(int fd, void* out, size_t size) noexcept {
  auto* cursor = static_cast<unsigned char*>(out);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd, cursor + done, size - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

}  // namespace hangshim::report
