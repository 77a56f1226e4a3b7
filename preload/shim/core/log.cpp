#include "shim/core/log.h"

#include <unistd.h>

#include <cerrno>
#include <mutex>
#include <set>

namespace hangshim::shim {

void print_line(const std::string& message) noexcept {
  try {
    std::string line = "hangshim: " + message + "\n";
    const char* p = line.data();
    size_t left = line.size();
    while (left > 0) {
      ssize_t n = ::write(STDERR_FILENO, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      p += n;
      left -= static_cast<size_t>(n);
    }
  } catch (...) {
  }
}

void warn_once(const std::string& message) noexcept {
  static std::mutex mutex;
  static std::set<std::string>* seen = new std::set<std::string>;  // never destroyed: used at exit
  try {
    std::lock_guard<std::mutex> lock(mutex);
    if (!seen->insert(message).second) return;
  } catch (...) {
    return;
  }
  print_line(message);
}

}  // namespace hangshim::shim
