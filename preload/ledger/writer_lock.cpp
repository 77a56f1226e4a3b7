#include "ledger/writer_lock.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "ledger/identity.h"

namespace hangshim::ledger {

namespace {

// The first byte: a lock on a range, not the whole file, so a reader's question about it says
// nothing about any other lock someone may take on the file.
struct flock first_byte(short type) {
  struct flock range {};
  range.l_type = type;
  range.l_whence = SEEK_SET;
  range.l_start = 0;
  range.l_len = 1;
  range.l_pid = 0;  // the kernel requires 0 for open-file-description locks
  return range;
}

// The system call itself: glibc's fcntl wrapper is versioned fcntl64@GLIBC_2.28 where the build
// asks for 64-bit offsets, which would stop libhangshim.so loading on an older C library
// (docs/install.md: nothing newer than GLIBC_2.17). struct flock is the 64-bit one on every
// 64-bit target.
int lock_call(int fd, int command, struct flock& range) { return static_cast<int>(::syscall(SYS_fcntl, fd, command, &range)); }

// This host's name as the shim writes it into the header, asked once, not once per ledger.
const std::string& cached_host() noexcept {
  static const std::string name = this_host();
  return name;
}

}  // namespace

bool take_writer_lock(int fd) noexcept {
  struct flock range = first_byte(F_RDLCK);
  return lock_call(fd, F_OFD_SETLK, range) == 0;
}

WriterLock find_writer_lock(int fd) noexcept {
  // Would a write lock be refused? Only by a holder of the writer's read lock (or of another
  // lock on that byte, which makes the answer "held": the cautious one).
  struct flock range = first_byte(F_WRLCK);
  if (lock_call(fd, F_OFD_GETLK, range) != 0) return WriterLock::Unknown;
  return range.l_type == F_UNLCK ? WriterLock::Released : WriterLock::Held;
}

bool nobody_writes(const Header& h, WriterLock lock) noexcept {
  if (lock != WriterLock::Released || (h.features & kFeatureWriterLock) == 0) return false;
  const std::string& host = cached_host();
  bool here = !host.empty() && ::strnlen(h.host, sizeof h.host) == host.size() && std::memcmp(h.host, host.data(), host.size()) == 0;
  if (!here) return true;
  if (h.pid <= 0 || h.pid > INT32_MAX) return false;
  return ::kill(static_cast<pid_t>(h.pid), 0) != 0 && errno == ESRCH;
}

}  // namespace hangshim::ledger
