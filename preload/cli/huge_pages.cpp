#include "cli/huge_pages.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string_view>

namespace hangshim::cli {

namespace {

// Set, with GLIBC_TUNABLES, in the program run again: those two are ours to remove there.
constexpr const char* kMarker = "HANGSHIM_HUGE_PAGES_SET";
constexpr const char* kTunables = "glibc.malloc.hugetlb=1";

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// "always [madvise] never": the mode in brackets. Huge pages on request in "madvise" and
// "always" (where glibc's request still makes it grow its heap by whole huge pages).
bool kernel_gives_huge_pages() {
  int fd = ::open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char text[128] = {};
  ssize_t n = ::read(fd, text, sizeof(text) - 1);
  ::close(fd);
  if (n <= 0) return false;
  std::string_view mode(text, static_cast<size_t>(n));
  return mode.find("[madvise]") != std::string_view::npos || mode.find("[always]") != std::string_view::npos;
}

bool under_valgrind() {
  const char* preload = std::getenv("LD_PRELOAD");
  return preload != nullptr && std::strstr(preload, "vgpreload") != nullptr;
}

// Started as `ld-linux-x86-64.so.2 hangshim report ...`: /proc/self/exe is the loader, which,
// run again with these arguments, would take "report" for the program to load.
bool started_by_the_loader() {
  char exe[4096];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n <= 0) return true;  // no /proc: the exec below could not work either
  std::string_view path(exe, static_cast<size_t>(n));
  std::string_view name = path.substr(path.rfind('/') + 1);
  return name.starts_with("ld-") || name.starts_with("ld.so");
}

}  // namespace

void run_again_with_huge_pages(char** argv) {
  if (std::getenv(kMarker) != nullptr) {
    // The program run again: glibc has read the tunables; they are not the user's to inherit.
    ::unsetenv("GLIBC_TUNABLES");
    ::unsetenv(kMarker);
    return;
  }
  // Asked for only: on the VMs measured last, huge pages cost more CPU than they saved (huge_pages.h).
  const char* wanted = std::getenv("HANGSHIM_HUGE_PAGES");
  if (kSanitized || std::getenv("GLIBC_TUNABLES") != nullptr || wanted == nullptr || std::strcmp(wanted, "1") != 0 ||
      under_valgrind() || !kernel_gives_huge_pages() || started_by_the_loader()) {
    return;
  }
  if (::setenv("GLIBC_TUNABLES", kTunables, 1) != 0 || ::setenv(kMarker, "1", 1) != 0) {
    ::unsetenv("GLIBC_TUNABLES");
    ::unsetenv(kMarker);
    return;
  }
  ::execv("/proc/self/exe", argv);
  // No /proc, or the binary is gone: go on as it is.
  ::unsetenv("GLIBC_TUNABLES");
  ::unsetenv(kMarker);
}

}  // namespace hangshim::cli
