// Memory of a live process: process_vm_readv, or pread on /proc/PID/mem where a seccomp filter
// or an old kernel refuses process_vm_readv. A small page cache turns the many small reads of a
// stack walk (a few words per frame, strings, dict entries) into few system calls.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <mutex>
#include <string>

#include "pyframes/memory.h"

namespace pyframes {

class ProcessMemory final : public Memory {
 public:
  // How bytes are fetched: process_vm_readv with a fallback to /proc/PID/mem when the kernel
  // or a seccomp filter refuses it (Auto), or /proc/PID/mem only.
  enum class Transport { Auto, ProcMem };

  // `cache` = false reads straight through (the target keeps running, so cached pages may be
  // stale; a single dump is short enough that a per-dump cache is what a reader wants).
  explicit ProcessMemory(pid_t pid, bool cache = true, Transport transport = Transport::Auto);
  ~ProcessMemory() override;

  ReadStatus read(uint64_t address, void* out, size_t size) const noexcept override;
  std::string describe() const override;
  pid_t pid() const { return pid_; }

  // Drops every cached page (after the target ran on, e.g. between two dumps).
  void clear_cache() const noexcept;

 private:
  ReadStatus read_uncached(uint64_t address, void* out, size_t size) const noexcept;
  ReadStatus read_vm(uint64_t address, void* out, size_t size) const noexcept;
  ReadStatus read_proc_mem(uint64_t address, void* out, size_t size) const noexcept;
  ReadStatus read_page(uint64_t page, const uint8_t** data) const noexcept;

  // The cache: kSets sets of kWays pages, a page's set chosen by its address, the least recently
  // used replaced within the set: a lookup compares 4 addresses instead of scanning every page.
  // 64 pages (256 KiB): a dump of 4 threads x 100 frames touches ~140 distinct pages, but a
  // larger cache lost more than it saved: every page of it the kernel faults in on first use
  // (process_vm_readv writing into it) cost more than the ~10 pages read twice.
  static constexpr size_t kPageSize = 4096;
  static constexpr size_t kWays = 4;
  static constexpr size_t kSets = 16;
  static constexpr size_t kCachePages = kWays * kSets;
  // Which page a cache slot holds, apart from the slots' bytes: a lookup reads only this small
  // array, so a slot's 4 KiB are touched (and faulted in) only when a read fills them.
  struct PageTag {
    uint64_t page = UINT64_MAX;  // page-aligned address, UINT64_MAX when empty
    uint64_t last_use = 0;
  };
  using PageBytes = std::array<uint8_t, kPageSize>;

  pid_t pid_;
  bool cache_enabled_;
  mutable std::mutex mutex_;
  mutable bool use_proc_mem_ = false;  // process_vm_readv refused once: stay on /proc/PID/mem
  mutable int mem_fd_ = -1;
  mutable uint64_t clock_ = 0;
  mutable size_t last_hit_ = 0;  // the slot of the previous hit
  mutable std::array<PageTag, kCachePages> tags_{};
  // Allocated on first cached read, left uninitialised (zeroing was a visible share of a dump):
  // only bytes a read filled are ever handed out.
  mutable PageBytes* bytes_ = nullptr;
};

}  // namespace pyframes
