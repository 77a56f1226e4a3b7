#include "ledger/snapshot.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "ledger/format.h"

namespace hangshim::ledger {

using pyframes::ErrorKind;
using pyframes::make_error;

namespace {

constexpr uint64_t kRingChunk = 4096;  // ring entries copied per pass (512 KiB)
constexpr int kEntryRetries = 4;       // per unstable ring entry, after its chunk

// Orders the loads the kernel made for one pread before those of the next (a no-op on x86,
// a load barrier on AArch64). ThreadSanitizer does not model fences (GCC warns under
// -fsanitize=thread); the copies it orders are the kernel's, which TSan does not see either.
#if defined(__SANITIZE_THREAD__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wtsan"
#endif
inline void loads_in_order() { __atomic_thread_fence(__ATOMIC_ACQUIRE); }
#if defined(__SANITIZE_THREAD__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

enum class ReadOutcome { Ok, Short, Failed };

ReadOutcome read_at(int fd, void* out, uint64_t size, uint64_t offset) {
  auto* cursor = static_cast<unsigned char*>(out);
  while (size > 0) {
    ssize_t n = ::pread(fd, cursor, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ReadOutcome::Failed;
    if (n == 0) return ReadOutcome::Short;
    cursor += n;
    size -= static_cast<uint64_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return ReadOutcome::Ok;
}

// Where the parts of the file are, from the first copy of the header; only used when every
// part lies inside the file (else the parser rejects the header and nothing here matters).
struct Plan {
  uint64_t comm_offset = 0;
  uint64_t comm_count = 0;
  uint64_t ring_offset = 0;
  uint64_t ring_capacity = 0;
  uint64_t ring_head = 0;
  uint64_t callsite_offset = 0;
  uint64_t callsite_entry_size = 0;
  uint64_t callsite_count = 0;
  uint64_t strings_offset = 0;
  uint64_t strings_used = 0;
};

bool inside(uint64_t offset, uint64_t length, uint64_t size) { return offset <= size && length <= size - offset; }

bool make_plan(const Header& h, uint64_t size, Plan& plan) {
  if (h.comm_capacity > kMaxCommCapacity || h.ring_capacity == 0 || h.ring_capacity > kMaxRingCapacity ||
      (h.ring_capacity & (h.ring_capacity - 1)) != 0 || h.callsite_capacity > kMaxCallsiteCapacity ||
      h.callsite_depth > kMaxCallsiteDepth || h.callsite_entry_size != callsite_entry_size(h.callsite_depth) ||
      h.comm_entry_size != sizeof(CommEntry) || h.ring_entry_size != sizeof(RingEntry) ||
      h.strings_size > kMaxStringsSize) {
    return false;
  }
  plan.comm_offset = h.comm_offset;
  plan.comm_count = std::min(h.comm_count, h.comm_capacity);
  plan.ring_offset = h.ring_offset;
  plan.ring_capacity = h.ring_capacity;
  plan.ring_head = h.ring_head;
  plan.callsite_offset = h.callsite_offset;
  plan.callsite_entry_size = h.callsite_entry_size;
  plan.callsite_count = std::min(h.callsite_count, h.callsite_capacity);
  plan.strings_offset = h.strings_offset;
  plan.strings_used = std::min(h.strings_used, h.strings_size);
  return h.comm_offset >= kHeaderSize && h.ring_offset >= kHeaderSize && h.callsite_offset >= kHeaderSize &&
         h.strings_offset >= kHeaderSize && inside(h.comm_offset, uint64_t{h.comm_capacity} * sizeof(CommEntry), size) &&
         inside(h.ring_offset, uint64_t{h.ring_capacity} * sizeof(RingEntry), size) &&
         inside(h.callsite_offset, uint64_t{h.callsite_capacity} * h.callsite_entry_size, size) &&
         inside(h.strings_offset, h.strings_size, size);
}

class Copier {
 public:
  Copier(int fd, uint64_t size, const std::string& source, std::vector<unsigned char>& out)
      : fd_(fd), size_(size), source_(source), out_(out) {}

  // Copies [offset, offset + length) of the file to `into`.
  pyframes::Result<void> copy(void* into, uint64_t length, uint64_t offset) {
    switch (read_at(fd_, into, length, offset)) {
      case ReadOutcome::Ok: return {};
      case ReadOutcome::Short:
        return make_error(ErrorKind::Truncated,
                          fmt::format("{} shrank while being read (it had {} bytes): another process cut or replaced it",
                                      source_, size_),
                          "read it again; if this repeats, find what else writes to that directory");
      case ReadOutcome::Failed: break;
    }
    return make_error(ErrorKind::Io, fmt::format("cannot read {}: {}", source_, std::strerror(errno)));
  }
  pyframes::Result<void> copy_in_place(uint64_t offset, uint64_t length) { return copy(out_.data() + offset, length, offset); }

  // Pass 4: the ring slots [first, first + count), in chunks. The contents are read straight
  // into their place in the copy; the stamps before and after go to two scratch chunks, left
  // uninitialized (a report reads tens of thousands of ledgers: three fresh zeroed buffers for
  // each, and a copy of the contents, were a tenth of its time). Nothing is kept after the
  // snapshot: the shim reads ledgers too (sweeping dead ones), in the job's own process.
  pyframes::Result<void> copy_ring(const Plan& plan, uint64_t first, uint64_t count) {
    for (uint64_t done = 0; done < count;) {
      uint64_t n = std::min(kRingChunk, count - done);
      uint64_t offset = plan.ring_offset + (first + done) * sizeof(RingEntry);
      if (scratch_entries_ < n) {
        before_.reset(new RingEntry[n]);
        after_.reset(new RingEntry[n]);
        scratch_entries_ = n;
      }
      RingEntry* before = before_.get();
      RingEntry* after = after_.get();
      PYFRAMES_CHECK(copy(before, n * sizeof(RingEntry), offset));
      loads_in_order();
      PYFRAMES_CHECK(copy_in_place(offset, n * sizeof(RingEntry)));
      loads_in_order();
      PYFRAMES_CHECK(copy(after, n * sizeof(RingEntry), offset));
      for (uint64_t i = 0; i < n; ++i) {
        uint64_t at = offset + i * sizeof(RingEntry);
        uint64_t stamp;
        std::memcpy(&stamp, out_.data() + at + offsetof(RingEntry, stamp), sizeof stamp);
        if (!stable(before[i].stamp, stamp, after[i].stamp)) PYFRAMES_CHECK(copy_entry_alone(at));
      }
      done += n;
    }
    return {};
  }

 private:
  static bool stable(uint64_t before, uint64_t contents, uint64_t after) {
    return (before & 1) == 0 && before == after && contents == before;
  }

  pyframes::Result<void> copy_entry_alone(uint64_t at) {
    RingEntry before{}, contents{}, after{};
    for (int attempt = 0; attempt < kEntryRetries; ++attempt) {
      PYFRAMES_CHECK(copy(&before, sizeof before, at));
      loads_in_order();
      PYFRAMES_CHECK(copy(&contents, sizeof contents, at));
      loads_in_order();
      PYFRAMES_CHECK(copy(&after, sizeof after, at));
      if (stable(before.stamp, contents.stamp, after.stamp)) {
        std::memcpy(out_.data() + at, &contents, sizeof contents);
        return {};
      }
      sched_yield();  // a writer between its two stamp stores: give it the CPU
    }
    // Still moving (or its writer died mid-write): odd, so the parser skips it as busy.
    contents.stamp = 1;
    std::memcpy(out_.data() + at, &contents, sizeof contents);
    return {};
  }

  int fd_;
  uint64_t size_;
  const std::string& source_;
  std::vector<unsigned char>& out_;
  std::unique_ptr<RingEntry[]> before_, after_;  // pass 4's stamps, scratch_entries_ each
  uint64_t scratch_entries_ = 0;
};

// Pass 3's ranges, given in file order, merged into one read where the gap between two is at
// most kMaxMergedGap bytes.
class CopyRuns {
 public:
  explicit CopyRuns(Copier& copier) : copier_(copier) {}
  pyframes::Result<void> add(uint64_t offset, uint64_t length) {
    if (length == 0) return {};
    if (length_ > 0 && offset >= offset_ + length_ && offset - (offset_ + length_) <= kMaxMergedGap) {
      length_ = offset + length - offset_;
      return {};
    }
    PYFRAMES_CHECK(flush());
    offset_ = offset;
    length_ = length;
    return {};
  }
  pyframes::Result<void> flush() {
    if (length_ == 0) return {};
    uint64_t length = length_;
    length_ = 0;
    return copier_.copy_in_place(offset_, length);
  }

 private:
  static constexpr uint64_t kMaxMergedGap = 16 * 1024;
  Copier& copier_;
  uint64_t offset_ = 0;
  uint64_t length_ = 0;
};

}  // namespace

pyframes::Result<std::vector<unsigned char>> snapshot_ledger(int fd, uint64_t size, const std::string& source) {
  std::vector<unsigned char> out;
  PYFRAMES_CHECK(snapshot_ledger_into(fd, size, source, out));
  return out;
}

pyframes::Result<void> snapshot_ledger_into(int fd, uint64_t size, const std::string& source, std::vector<unsigned char>& out) {
  if (size > kMaxLedgerFileSize) {
    return make_error(ErrorKind::Corrupt,
                      fmt::format("{}: {} bytes is implausibly large for a ledger", source, size),
                      "pass a file from HANGSHIM_DIR (default /dev/shm/hangshim-$UID)");
  }
  // Zeroed: what is not copied below (unused entries and slots) reads as never written.
  out.assign(static_cast<size_t>(size), 0);
  Copier copier(fd, size, source, out);
  Header first{};
  if (size < sizeof(Header)) {
    PYFRAMES_CHECK(copier.copy_in_place(0, size));  // too short for a ledger: the parser says so
    return {};
  }
  // Pass 1: the header as published so far.
  PYFRAMES_CHECK(copier.copy(&first, sizeof first, 0));
  Plan plan;
  if (!make_plan(first, size, plan)) {
    // Not a ledger we can take apart (or not published yet): the parser judges the copy, with
    // the magic as first seen (a header published meanwhile may be half in this copy).
    PYFRAMES_CHECK(copier.copy_in_place(0, size));
    std::memcpy(out.data(), first.magic, sizeof first.magic);
    return {};
  }
  loads_in_order();
  // Pass 2: the state words of the entries the counts cover (copied with their entries, one
  // read per section; only the states are kept).
  std::vector<unsigned char> early;
  std::vector<uint32_t> comm_states(plan.comm_count), callsite_states(plan.callsite_count);
  early.resize(plan.comm_count * sizeof(CommEntry));
  PYFRAMES_CHECK(copier.copy(early.data(), early.size(), plan.comm_offset));
  for (uint64_t i = 0; i < plan.comm_count; ++i) {
    std::memcpy(&comm_states[i], early.data() + i * sizeof(CommEntry) + offsetof(CommEntry, state), 4);
  }
  early.resize(plan.callsite_count * plan.callsite_entry_size);
  PYFRAMES_CHECK(copier.copy(early.data(), early.size(), plan.callsite_offset));
  for (uint64_t i = 0; i < plan.callsite_count; ++i) {
    std::memcpy(&callsite_states[i], early.data() + i * plan.callsite_entry_size + offsetof(CallsiteEntry, state), 4);
  }
  loads_in_order();
  // Pass 3: contents. Parts that lie close together are read in one pread (the bytes between
  // them, unused entries, are copied too and never looked at): a syscall costs as much as
  // copying a few pages, and a report makes these calls for every ledger.
  CopyRuns runs(copier);
  PYFRAMES_CHECK(runs.add(0, kHeaderSize));
  PYFRAMES_CHECK(runs.add(plan.comm_offset, plan.comm_count * sizeof(CommEntry)));
  PYFRAMES_CHECK(runs.add(plan.callsite_offset, plan.callsite_count * plan.callsite_entry_size));
  PYFRAMES_CHECK(runs.add(plan.strings_offset, plan.strings_used));
  PYFRAMES_CHECK(runs.flush());
  // The earlier passes' view of what is published replaces the contents' own.
  auto* header = reinterpret_cast<Header*>(out.data());
  std::memcpy(header->magic, first.magic, sizeof first.magic);
  header->state = first.state;
  header->ring_head = first.ring_head;
  header->comm_count = first.comm_count;
  header->callsite_count = first.callsite_count;
  header->strings_used = first.strings_used;
  header->error_state = first.error_state;
  for (uint64_t i = 0; i < plan.comm_count; ++i) {
    std::memcpy(out.data() + plan.comm_offset + i * sizeof(CommEntry) + offsetof(CommEntry, state), &comm_states[i], 4);
  }
  for (uint64_t i = 0; i < plan.callsite_count; ++i) {
    std::memcpy(out.data() + plan.callsite_offset + i * plan.callsite_entry_size + offsetof(CallsiteEntry, state),
                &callsite_states[i], 4);
  }
  // Pass 4: the ring slots of the newest min(head, capacity) records (at most two runs).
  uint64_t records = std::min(plan.ring_head, plan.ring_capacity);
  if (records > 0) {
    uint64_t first_slot = (plan.ring_head - records) & (plan.ring_capacity - 1);
    uint64_t run = std::min(records, plan.ring_capacity - first_slot);
    PYFRAMES_CHECK(copier.copy_ring(plan, first_slot, run));
    if (run < records) PYFRAMES_CHECK(copier.copy_ring(plan, 0, records - run));
  }
  return {};
}

}  // namespace hangshim::ledger
