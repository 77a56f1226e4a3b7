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

  static constexpr size_t kPageSize = 4096;
  static constexpr size_t kCachePages = 64;  // 256 KiB: a deep stack's frames plus their code objects
  struct CachedPage {
    uint64_t page = UINT64_MAX;  // page-aligned address, UINT64_MAX when empty
    uint64_t last_use = 0;
    std::array<uint8_t, kPageSize> bytes{};
  };

  pid_t pid_;
  bool cache_enabled_;
  mutable std::mutex mutex_;
  mutable bool use_proc_mem_ = false;  // process_vm_readv refused once: stay on /proc/PID/mem
  mutable int mem_fd_ = -1;
  mutable uint64_t clock_ = 0;
  mutable size_t last_hit_ = 0;
  mutable std::array<CachedPage, kCachePages>* pages_ = nullptr;  // allocated on first cached read
};

}  // namespace pyframes
