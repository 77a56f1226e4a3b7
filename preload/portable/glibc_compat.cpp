// Symbols that Debian's static libstdc++ (gcc 12, built against glibc 2.36) asks the C library
// for, and an old glibc does not have: each would add a symbol version that makes the dynamic
// loader refuse to load libhangshim.so — and with it the whole job, before the shim runs. These
// hidden definitions are what the shim's copy of libstdc++ binds to instead, on every glibc.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace {

// Fills out[done, length) with what `source` gives, retrying when a signal interrupted it;
// stops at an error or at end of file. Returns how far it got.
template <typename Source>
size_t fill_from(unsigned char* out, size_t done, size_t length, Source source) {
  while (done < length) {
    const long n = source(out + done, length - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  return done;
}

}  // namespace

extern "C" {

// glibc 2.32: non-zero while the process has one thread, so libstdc++ may skip atomic reference
// counting. The shim cannot know that, so it says "not single-threaded": always atomic, always
// correct.
__attribute__((visibility("hidden"))) char __libc_single_threaded = 0;

// glibc 2.25. std::random_device's entropy source; the kernel call is older than the glibc
// wrapper (Linux 3.17), and /dev/urandom serves older kernels.
__attribute__((visibility("hidden"))) int getentropy(void* buffer, size_t length) {
  if (length > 256) {
    errno = EIO;
    return -1;
  }
  auto* out = static_cast<unsigned char*>(buffer);
  size_t done = fill_from(out, 0, length, [](unsigned char* at, size_t n) { return syscall(SYS_getrandom, at, n, 0); });
  if (done == length) return 0;
  const int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  done = fill_from(out, done, length, [fd](unsigned char* at, size_t n) { return static_cast<long>(read(fd, at, n)); });
  close(fd);
  if (done == length) return 0;
  errno = EIO;
  return -1;
}

// glibc 2.36: std::random_device("arc4random").
__attribute__((visibility("hidden"))) uint32_t arc4random(void) {
  uint32_t value = 0;
  // No entropy at all (no getrandom, no /dev/urandom): glibc would abort; the shim must not.
  if (getentropy(&value, sizeof value) != 0) value = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(&value));
  return value;
}

}  // extern "C"
