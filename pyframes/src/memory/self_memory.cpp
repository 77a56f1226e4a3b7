#include "pyframes/self_memory.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "modules/maps_line.h"

// The seqlock fences below are what the C++ memory model needs; ThreadSanitizer does not model
// fences (GCC warns under -fsanitize=thread), but every access they order is atomic, so it
// reports nothing either way.
#if defined(__SANITIZE_THREAD__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wtsan"
#endif

namespace pyframes {

namespace {

// Accumulates readable ranges from /proc/PID/maps lines, merging neighbours. No allocation.
class RangeBuilder {
 public:
  RangeBuilder(SelfMemory::Range* out, size_t capacity) : out_(out), capacity_(capacity) {}

  void add_line(const char* line, size_t length) noexcept {
    MapsLine fields;
    if (!parse_maps_line(std::string_view(line, length), fields) || !fields.readable || fields.end <= fields.start) return;
    if (!safe_to_read(fields.path)) return;
    if (count_ > 0 && out_[count_ - 1].end == fields.start) {
      out_[count_ - 1].end = fields.end;
      return;
    }
    if (count_ == capacity_) {
      overflow_ = true;
      return;
    }
    out_[count_++] = {fields.start, fields.end};
  }

  size_t count() const noexcept { return count_; }
  bool overflow() const noexcept { return overflow_; }

 private:
  // Device mappings (GPU apertures, RDMA queues) can hang or fault when touched; [vvar] pages
  // fault on some kernels. Python objects never live there, so they are left out.
  static bool safe_to_read(std::string_view path) noexcept {
    return !path.starts_with("/dev/") && !path.starts_with("[vvar");
  }

  SelfMemory::Range* out_;
  size_t capacity_;
  size_t count_ = 0;
  bool overflow_ = false;
};

template <class T>
T load_relaxed(const T& field) noexcept {
  return __atomic_load_n(&field, __ATOMIC_RELAXED);
}

template <class T>
void store_relaxed(T& field, T value) noexcept {
  __atomic_store_n(&field, value, __ATOMIC_RELAXED);
}

// Copies of the ranges the calling thread hit last (most recent first), valid for one table
// generation of one SelfMemory: a frame walk reads a handful of places (the thread's frame
// stack, code objects on the heap, the code type in libpython) over and over, so almost every
// read is answered from here with two compares — no shared state, no atomics, no search.
// The copies are exactly as trustworthy as the table they came from (a refresh, which happens
// on a miss, flushes them). Initial-exec TLS: no __tls_get_addr call per read (the shim is
// preloaded, so static TLS is available).
struct RecentRanges {
  static constexpr size_t kSize = 4;
  const void* owner = nullptr;
  uint64_t generation = 0;
  size_t count = 0;
  SelfMemory::Range ranges[kSize] = {};
};
__attribute__((tls_model("initial-exec"))) constinit thread_local RecentRanges t_recent;

inline void copy_small(void* out, const void* in, size_t size) noexcept {
  switch (size) {  // the walker's reads are mostly one field: let the compiler emit one move
    case 1: std::memcpy(out, in, 1); return;
    case 2: std::memcpy(out, in, 2); return;
    case 4: std::memcpy(out, in, 4); return;
    case 8: std::memcpy(out, in, 8); return;
    default: std::memcpy(out, in, size); return;
  }
}

}  // namespace

size_t parse_readable_ranges(const char* text, size_t length, SelfMemory::Range* out, size_t capacity,
                             bool* overflow) noexcept {
  RangeBuilder builder(out, capacity);
  size_t line_start = 0;
  for (size_t i = 0; i <= length; ++i) {
    if (i == length || text[i] == '\n') {
      if (i > line_start) builder.add_line(text + line_start, i - line_start);
      line_start = i + 1;
    }
  }
  if (overflow != nullptr) *overflow = builder.overflow();
  return builder.count();
}

SelfMemory::SelfMemory(Mode mode, size_t initial_capacity) : mode_(mode) {
  if (mode_ == Mode::Table) {
    size_t capacity = initial_capacity < 2 ? 2 : initial_capacity;
    for (auto& table : tables_) {
      table.ranges = std::make_unique<Range[]>(capacity);
      table.capacity = capacity;
    }
    live_.store(tables_[0].ranges.get(), std::memory_order_relaxed);
    refresh();
  }
}

SelfMemory::~SelfMemory() {
  int fd = mem_fd_.load(std::memory_order_relaxed);
  if (fd >= 0) ::close(fd);
}

std::string SelfMemory::describe() const { return fmt::format("this process (pid {})", ::getpid()); }

size_t SelfMemory::range_count() const noexcept { return count_.load(std::memory_order_acquire); }

ReadStatus SelfMemory::read(uint64_t address, void* out, size_t size) const noexcept {
  if (size == 0) return ReadStatus::Ok;
  if (address == 0 || address + size < address) return ReadStatus::Unmapped;
  if (mode_ != Mode::Table) return read_syscall(address, out, size);
  // The hot path: one of the ranges this thread hit last (see RecentRanges).
  const RecentRanges& recent = t_recent;
  if (recent.owner == this && recent.generation == refreshes_.load(std::memory_order_acquire)) {
    for (size_t k = 0; k < recent.count; ++k) {
      if (recent.ranges[k].start <= address && address + size <= recent.ranges[k].end) {
        copy_small(out, reinterpret_cast<const void*>(static_cast<uintptr_t>(address)), size);
        return ReadStatus::Ok;
      }
    }
  }
  return read_table(address, out, size);
}

SelfMemory::Lookup SelfMemory::lookup(uint64_t address, size_t size, Range* found) const noexcept {
  uint64_t before = sequence_.load(std::memory_order_acquire);
  if (before & 1) return Lookup::Busy;
  const Range* ranges = live_.load(std::memory_order_relaxed);
  size_t count = count_.load(std::memory_order_relaxed);
  // Last range whose start <= address (binary search); the contents are validated by the
  // sequence check below, so a racing refresh can at worst make us retry.
  size_t low = 0;
  size_t high = count;
  while (low < high) {
    size_t mid = low + (high - low) / 2;
    if (load_relaxed(ranges[mid].start) <= address) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  bool hit = false;
  if (low > 0) {
    found->start = load_relaxed(ranges[low - 1].start);
    found->end = load_relaxed(ranges[low - 1].end);
    hit = address + size <= found->end;
  }
  std::atomic_thread_fence(std::memory_order_acquire);
  if (sequence_.load(std::memory_order_relaxed) != before) return Lookup::Busy;
  return hit ? Lookup::Hit : Lookup::Miss;
}

void SelfMemory::remember(const Range& range, uint64_t generation) const noexcept {
  RecentRanges& recent = t_recent;
  if (recent.owner != this || recent.generation != generation) {
    recent.owner = this;
    recent.generation = generation;
    recent.count = 0;
  }
  size_t keep = recent.count < RecentRanges::kSize ? recent.count : RecentRanges::kSize - 1;
  for (size_t k = keep; k > 0; --k) recent.ranges[k] = recent.ranges[k - 1];
  recent.ranges[0] = range;
  recent.count = keep + 1;
}

ReadStatus SelfMemory::read_table(uint64_t address, void* out, size_t size) const noexcept {
  uint64_t generation = 0;
  Range range{};
  for (int attempt = 0; attempt < 4; ++attempt) {
    generation = refreshes_.load(std::memory_order_acquire);
    Lookup found = lookup(address, size, &range);
    if (found == Lookup::Hit) {
      remember(range, generation);
      copy_small(out, reinterpret_cast<const void*>(static_cast<uintptr_t>(address)), size);
      return ReadStatus::Ok;
    }
    if (found == Lookup::Busy) {
      // A refresh is publishing; waiting for its mutex orders us after it.
      std::lock_guard<std::mutex> wait(refresh_mutex_);
      continue;
    }
    // A miss: the range may have been mapped since the table was read. Re-read it once; if
    // another thread refreshed meanwhile, its table is as new as ours would be.
    {
      std::lock_guard<std::mutex> lock(refresh_mutex_);
      if (refreshes_.load(std::memory_order_relaxed) == generation && !refresh_locked()) return ReadStatus::IoError;
    }
    generation = refreshes_.load(std::memory_order_acquire);
    if (lookup(address, size, &range) == Lookup::Hit) {
      remember(range, generation);
      copy_small(out, reinterpret_cast<const void*>(static_cast<uintptr_t>(address)), size);
      return ReadStatus::Ok;
    }
    return ReadStatus::Unmapped;
  }
  return ReadStatus::IoError;
}

bool SelfMemory::refresh() const noexcept {
  if (mode_ != Mode::Table) return true;
  std::lock_guard<std::mutex> lock(refresh_mutex_);
  return refresh_locked();
}

bool SelfMemory::refresh_locked() const noexcept {
  int fd = ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  int scratch_index = 1 - live_index_;
  Table* scratch = &tables_[scratch_index];
  RangeBuilder builder(scratch->ranges.get(), scratch->capacity);
  // Stream the file through a fixed buffer; a line longer than the buffer (a path near
  // PATH_MAX) is cut, which only loses its path, not its address range.
  char buffer[16384];
  size_t filled = 0;
  bool ok = true;
  for (;;) {
    ssize_t got = ::read(fd, buffer + filled, sizeof(buffer) - filled);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      ok = false;
      break;
    }
    filled += static_cast<size_t>(got);
    size_t line_start = 0;
    for (size_t i = 0; i < filled; ++i) {
      if (buffer[i] == '\n') {
        builder.add_line(buffer + line_start, i - line_start);
        line_start = i + 1;
      }
    }
    if (got == 0) {
      if (line_start < filled) builder.add_line(buffer + line_start, filled - line_start);
      break;
    }
    if (line_start == 0 && filled == sizeof(buffer)) {
      builder.add_line(buffer, filled);  // an over-long line: keep its range
      line_start = filled;
    }
    std::memmove(buffer, buffer + line_start, filled - line_start);
    filled -= line_start;
  }
  ::close(fd);
  if (!ok) return false;
  if (builder.overflow()) {
    // Grow both tables (doubling) and parse again; the old arrays are never freed while a
    // reader could still be searching them, so they are kept until destruction.
    size_t capacity = scratch->capacity * 2;
    auto bigger = std::make_unique<Range[]>(capacity);
    auto spare = std::make_unique<Range[]>(capacity);
    retired_.push_back(std::move(scratch->ranges));
    scratch->ranges = std::move(bigger);
    scratch->capacity = capacity;
    Table* other = &tables_[live_index_];
    retired_.push_back(std::move(other->ranges));
    other->ranges = std::move(spare);
    other->capacity = capacity;
    return refresh_locked();
  }
  // Publish: readers that overlap this window see an odd or changed sequence and retry.
  uint64_t sequence = sequence_.load(std::memory_order_relaxed);
  sequence_.store(sequence + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  live_.store(scratch->ranges.get(), std::memory_order_relaxed);
  count_.store(builder.count(), std::memory_order_relaxed);
  sequence_.store(sequence + 2, std::memory_order_release);
  live_index_ = scratch_index;
  refreshes_.fetch_add(1, std::memory_order_release);
  return true;
}

ReadStatus SelfMemory::read_syscall(uint64_t address, void* out, size_t size) const noexcept {
  pid_t pid = ::getpid();
  if (vm_readv_works_.load(std::memory_order_relaxed)) {
    iovec local{out, size};
    iovec remote{reinterpret_cast<void*>(static_cast<uintptr_t>(address)), size};
    ssize_t got = ::process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (got == static_cast<ssize_t>(size)) return ReadStatus::Ok;
    if (got >= 0 || errno == EFAULT) return ReadStatus::Unmapped;
    if (errno != ENOSYS && errno != EPERM) return ReadStatus::IoError;
    vm_readv_works_.store(false, std::memory_order_relaxed);  // seccomp or an old kernel
  }
  int fd = mem_fd_.load(std::memory_order_acquire);
  if (fd < 0 || mem_fd_pid_.load(std::memory_order_acquire) != pid) {
    std::lock_guard<std::mutex> lock(refresh_mutex_);
    fd = mem_fd_.load(std::memory_order_relaxed);
    if (fd < 0 || mem_fd_pid_.load(std::memory_order_relaxed) != pid) {
      int fresh = ::open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
      if (fresh < 0) return ReadStatus::PermissionDenied;
      // The old descriptor (inherited from a fork parent, reading the parent's memory) is left
      // open: another thread may be inside pread on it, and closing could let its number be
      // reused for an unrelated file. One descriptor per fork generation.
      mem_fd_.store(fresh, std::memory_order_release);
      mem_fd_pid_.store(pid, std::memory_order_release);
      fd = fresh;
    }
  }
  size_t done = 0;
  while (done < size) {
    ssize_t got = ::pread(fd, static_cast<char*>(out) + done, size - done, static_cast<off_t>(address + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return ReadStatus::Unmapped;
    done += static_cast<size_t>(got);
  }
  return ReadStatus::Ok;
}

}  // namespace pyframes
