// A file descriptor that closes itself: the core and every file it names are opened once and
// must be closed on every path out, errors included.
#pragma once

#include <unistd.h>

#include <utility>

namespace pyframes::core {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// Reads exactly `size` bytes at `offset`, retrying short reads and EINTR. False on EOF or error.
bool pread_exact(int fd, void* out, size_t size, uint64_t offset) noexcept;

}  // namespace pyframes::core
