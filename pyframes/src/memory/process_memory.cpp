#include "memory/process_memory.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>

namespace pyframes {

namespace {

ReadStatus status_from_errno(int error) {
  switch (error) {
    case ESRCH: return ReadStatus::ProcessGone;
    case EPERM:
    case EACCES: return ReadStatus::PermissionDenied;
    case EFAULT:
    case EIO:
    case EINVAL: return ReadStatus::Unmapped;
    default: return ReadStatus::IoError;
  }
}

}  // namespace

ProcessMemory::ProcessMemory(pid_t pid, bool cache, Transport transport)
    : pid_(pid), cache_enabled_(cache), use_proc_mem_(transport == Transport::ProcMem) {}

ProcessMemory::~ProcessMemory() {
  if (mem_fd_ >= 0) ::close(mem_fd_);
  delete[] bytes_;
}

std::string ProcessMemory::describe() const { return fmt::format("process {}", pid_); }

void ProcessMemory::clear_cache() const noexcept {
  std::lock_guard lock(mutex_);
  tags_.fill(PageTag{});
}

ReadStatus ProcessMemory::read_vm(uint64_t address, void* out, size_t size) const noexcept {
  iovec local{out, size};
  iovec remote{reinterpret_cast<void*>(address), size};
  ssize_t got = ::process_vm_readv(pid_, &local, 1, &remote, 1, 0);
  if (got == static_cast<ssize_t>(size)) return ReadStatus::Ok;
  if (got >= 0) return ReadStatus::Unmapped;  // a partial read: the range ends in unmapped memory
  int error = errno;
  if (error == ENOSYS || (error == EPERM && !use_proc_mem_)) {
    // Seccomp filters (some container runtimes) refuse process_vm_readv while /proc/PID/mem is
    // still allowed. Try the file once; if it works, keep using it.
    use_proc_mem_ = true;
    ReadStatus status = read_proc_mem(address, out, size);
    if (status == ReadStatus::PermissionDenied || status == ReadStatus::IoError) {
      use_proc_mem_ = false;
      return error == ENOSYS ? status : ReadStatus::PermissionDenied;
    }
    return status;
  }
  return status_from_errno(error);
}

ReadStatus ProcessMemory::read_proc_mem(uint64_t address, void* out, size_t size) const noexcept {
  if (mem_fd_ < 0) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/mem", static_cast<int>(pid_));
    mem_fd_ = ::open(path, O_RDONLY | O_CLOEXEC);
    if (mem_fd_ < 0) return errno == ENOENT ? ReadStatus::ProcessGone : status_from_errno(errno);
  }
  if (address > static_cast<uint64_t>(INT64_MAX)) return ReadStatus::Unmapped;
  auto* dest = static_cast<uint8_t*>(out);
  size_t done = 0;
  while (done < size) {
    ssize_t got = ::pread(mem_fd_, dest + done, size - done, static_cast<off_t>(address + done));
    if (got > 0) {
      done += static_cast<size_t>(got);
      continue;
    }
    if (got == 0) {
      // End of file: the process is a zombie or gone, or the address is not mapped.
      char path[64];
      std::snprintf(path, sizeof path, "/proc/%d", static_cast<int>(pid_));
      return ::access(path, F_OK) == 0 ? ReadStatus::Unmapped : ReadStatus::ProcessGone;
    }
    if (errno == EINTR) continue;
    return status_from_errno(errno);
  }
  return ReadStatus::Ok;
}

ReadStatus ProcessMemory::read_uncached(uint64_t address, void* out, size_t size) const noexcept {
  if (size == 0) return ReadStatus::Ok;
  if (address + size < address) return ReadStatus::Unmapped;
  return use_proc_mem_ ? read_proc_mem(address, out, size) : read_vm(address, out, size);
}

ReadStatus ProcessMemory::read_page(uint64_t page, const uint8_t** data) const noexcept {
  if (bytes_ == nullptr) {
    bytes_ = new (std::nothrow) PageBytes[kCachePages];
    if (bytes_ == nullptr) return ReadStatus::IoError;
  }
  // Consecutive reads mostly hit the page of the previous one: check that first.
  if (tags_[last_hit_].page == page) {
    tags_[last_hit_].last_use = ++clock_;
    *data = bytes_[last_hit_].data();
    return ReadStatus::Ok;
  }
  // Pages next to each other fall in neighbouring sets (a deep stack's frames, a dict's table).
  const size_t first = static_cast<size_t>(page / kPageSize) % kSets * kWays;
  size_t victim = first;
  for (size_t slot = first; slot != first + kWays; ++slot) {
    if (tags_[slot].page == page) {
      tags_[slot].last_use = ++clock_;
      last_hit_ = slot;
      *data = bytes_[slot].data();
      return ReadStatus::Ok;
    }
    if (tags_[slot].last_use < tags_[victim].last_use) victim = slot;
  }
  tags_[victim] = PageTag{};  // its bytes are about to change; empty until the read succeeds
  ReadStatus status = read_uncached(page, bytes_[victim].data(), kPageSize);
  if (status != ReadStatus::Ok) return status;
  tags_[victim] = PageTag{page, ++clock_};
  last_hit_ = victim;
  *data = bytes_[victim].data();
  return ReadStatus::Ok;
}

ReadStatus ProcessMemory::read(uint64_t address, void* out, size_t size) const noexcept {
  std::lock_guard lock(mutex_);
  if (!cache_enabled_ || size > 2 * kPageSize) return read_uncached(address, out, size);
  auto* dest = static_cast<uint8_t*>(out);
  size_t done = 0;
  while (done < size) {
    uint64_t at = address + done;
    if (at < address) return ReadStatus::Unmapped;
    uint64_t page = at & ~static_cast<uint64_t>(kPageSize - 1);
    size_t in_page = static_cast<size_t>(at - page);
    size_t chunk = std::min(size - done, kPageSize - in_page);
    const uint8_t* data = nullptr;
    ReadStatus status = read_page(page, &data);
    if (status != ReadStatus::Ok) {
      // A page that is not wholly readable (guard pages, the end of a mapping): read the exact
      // range instead, which succeeds whenever the bytes asked for are mapped.
      if (status == ReadStatus::Unmapped) return read_uncached(at, dest + done, size - done);
      return status;
    }
    std::memcpy(dest + done, data + in_page, chunk);
    done += chunk;
  }
  return ReadStatus::Ok;
}

}  // namespace pyframes
