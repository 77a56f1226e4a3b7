// The current process as a Memory source: the shim reading its own interpreter state.
//
// A read must never fault, even on a garbage pointer. Two strategies:
//  - Table (the shim's hot path): memcpy guarded by a cached table of readable ranges parsed
//    from /proc/self/maps. The table is re-read only when a read misses it, so a steady-state
//    read is a binary search and a memcpy: no syscall, no allocation. Safe for memory that no
//    other thread unmaps while it is read: the calling thread's own Python frames (the thread
//    is blocked inside the NCCL call, its frames and their code objects stay alive).
//  - Syscall (memory that other threads may be changing or freeing: another running thread's
//    stack, the stall dump of every thread): process_vm_readv on our own pid, /proc/self/mem
//    as fallback. The kernel reports a bad address as an error instead of a fault.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pyframes/memory.h"

namespace pyframes {

class SelfMemory final : public Memory {
 public:
  enum class Mode : uint8_t { Table, Syscall };

  // `initial_capacity`: readable ranges (after merging adjacent ones) the table holds before it
  // has to grow. Growing happens only on a refresh, never on a hit.
  explicit SelfMemory(Mode mode = Mode::Table, size_t initial_capacity = 4096);
  ~SelfMemory() override;

  ReadStatus read(uint64_t address, void* out, size_t size) const noexcept override;
  std::string describe() const override;

  Mode mode() const noexcept { return mode_; }
  // Re-reads /proc/self/maps now; false if it could not be read. Thread-safe.
  bool refresh() const noexcept;
  // How many times the table was re-read (tests and benchmarks check the hot path stays quiet).
  uint64_t refresh_count() const noexcept { return refreshes_.load(std::memory_order_relaxed); }
  // Readable ranges currently in the table.
  size_t range_count() const noexcept;

  struct Range {
    uint64_t start = 0;
    uint64_t end = 0;  // exclusive
  };

 private:
  struct Table {
    std::unique_ptr<Range[]> ranges;
    size_t capacity = 0;
  };

  enum class Lookup : uint8_t { Hit, Miss, Busy };
  Lookup lookup(uint64_t address, size_t size, Range* found) const noexcept;
  void remember(const Range& range, uint64_t generation) const noexcept;
  // The table path after a miss of the thread's recent ranges: search, refresh on a miss.
  __attribute__((noinline)) ReadStatus read_table(uint64_t address, void* out, size_t size) const noexcept;
  ReadStatus read_syscall(uint64_t address, void* out, size_t size) const noexcept;
  bool refresh_locked() const noexcept;

  Mode mode_;
  // Seqlock over (live_, count_): odd while a refresh publishes a new table.
  mutable std::atomic<uint64_t> sequence_{0};
  mutable std::atomic<Range*> live_{nullptr};
  mutable std::atomic<size_t> count_{0};
  mutable Table tables_[2];   // live and scratch, swapped on every refresh
  mutable int live_index_ = 0;
  mutable std::vector<std::unique_ptr<Range[]>> retired_;  // outgrown tables, kept for racing readers
  mutable std::mutex refresh_mutex_;  // one refresh at a time; never taken on a hit
  mutable std::atomic<uint64_t> refreshes_{0};
  mutable std::atomic<int> mem_fd_{-1};      // /proc/self/mem fallback, opened on first need
  mutable std::atomic<int> mem_fd_pid_{0};   // the pid mem_fd_ belongs to (reopened after fork)
  mutable std::atomic<bool> vm_readv_works_{true};
};

// Parses /proc/PID/maps text into readable, merged, sorted ranges without allocating.
// Returns the number of ranges written; `overflow` is set when `capacity` was too small.
// Exposed for tests; `text` need not be NUL-terminated.
size_t parse_readable_ranges(const char* text, size_t length, SelfMemory::Range* out, size_t capacity,
                             bool* overflow) noexcept;

}  // namespace pyframes
