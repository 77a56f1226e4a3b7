#include "cli/file_output.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

namespace hangshim::cli {

bool write_file_atomically(const std::string& path, const std::string& text, std::string_view option) {
  std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    fmt::print(stderr, "hangshim: cannot create {}: {} (pick a writable directory with {})\n", tmp, std::strerror(errno),
               option);
    return false;
  }
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      fmt::print(stderr, "hangshim: cannot write {}: {} (pick another place with {})\n", tmp, std::strerror(errno), option);
      ::close(fd);
      ::unlink(tmp.c_str());
      return false;
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    fmt::print(stderr, "hangshim: cannot write {}: {} (pick another place with {})\n", path, std::strerror(errno), option);
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace hangshim::cli
