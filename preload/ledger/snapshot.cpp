#include "ledger/snapshot.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <utility>

#include <fmt/format.h>

#include "ledger/format.h"
#include "ledger/writer_lock.h"

namespace hangshim::ledger {

using pyframes::ErrorKind;
using pyframes::make_error;

namespace {

constexpr int kEntryRetries = 4;       // per unstable ring entry, after its chunk
// The most pass 1 reads on the last ledger's word (SnapshotScratch::first_read).
constexpr uint64_t kMaxFirstRead = 4u << 20;

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
  Copier(int fd, uint64_t size, const std::string& source, std::vector<unsigned char>& out, uint32_t& reads)
      : fd_(fd), size_(size), source_(source), out_(out), reads_(reads) {}

  // Copies [offset, offset + length) of the file to `into`.
  pyframes::Result<void> copy(void* into, uint64_t length, uint64_t offset) {
    ++reads_;
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
  pyframes::Result<void> copy_in_place(uint64_t offset, uint64_t length) {
    if (length == 0) return {};
    copied_.push_back({offset, length});
    return copy(out_.data() + offset, length, offset);
  }

  // Zeroes every byte of the copy that no copy_in_place wrote: what was not copied (unused
  // entries and slots) reads as never written, never as the previous ledger's bytes left in
  // the reused buffer. Cheaper than zeroing the whole copy first (most of it is then copied).
  void zero_the_rest() {
    std::sort(copied_.begin(), copied_.end());
    uint64_t at = 0;
    for (const auto& [offset, length] : copied_) {
      if (offset > at) std::memset(out_.data() + at, 0, offset - at);
      at = std::max(at, offset + length);
    }
    if (size_ > at) std::memset(out_.data() + at, 0, size_ - at);
  }

  // Pass 4's check of the ring slots [0, count) (one run: the newest min(head, capacity)
  // records always are slots 0.. when the ring has not wrapped, every slot when it has): the
  // stamps `before` (pass 2) and `after` (pass 4) frame the contents (pass 3). An entry whose
  // stamps differ or are odd is retried alone, then marked odd.
  pyframes::Result<void> check_ring(const Plan& plan, uint64_t count, const unsigned char* before, const unsigned char* after) {
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t in_ring = i * sizeof(RingEntry) + offsetof(RingEntry, stamp);
      uint64_t at = plan.ring_offset + i * sizeof(RingEntry);
      uint64_t stamp_before, stamp, stamp_after;
      std::memcpy(&stamp_before, before + in_ring, sizeof stamp_before);
      std::memcpy(&stamp, out_.data() + at + offsetof(RingEntry, stamp), sizeof stamp);
      std::memcpy(&stamp_after, after + in_ring, sizeof stamp_after);
      if (!stable(stamp_before, stamp, stamp_after)) PYFRAMES_CHECK(copy_entry_alone(at));
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
  uint32_t& reads_;
  std::vector<std::pair<uint64_t, uint64_t>> copied_;  // (offset, length) of each copy_in_place
};

// Ranges given in file order, merged into one read where the gap between two is at most
// kMaxMergedGap bytes (the bytes between them, unused entries, are copied too and never looked
// at): a syscall costs as much as copying a few pages, and a report makes these calls for
// every ledger. Each merged run is read by `read(offset, length)`.
constexpr uint64_t kMaxMergedGap = 16 * 1024;

template <typename Read>
class CopyRuns {
 public:
  explicit CopyRuns(Read read) : read_(read) {}
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
    return read_(offset_, length);
  }

 private:
  Read read_;
  uint64_t offset_ = 0;
  uint64_t length_ = 0;
};

// A byte range of the file, for putting pass 2's ranges in file order.
struct Range {
  uint64_t offset;
  uint64_t length;
  bool operator<(const Range& other) const { return offset < other.offset; }
};

// How much of a file like this one pass 1 should read: the header and the ranges a later pass
// needs (sorted) that CopyRuns would have read with it as one run, had the header been one of
// them. Ledgers of the default geometry have hundreds of KiB of unused communicator entries
// between the header and the ring: there, only the header and the entries in use.
template <size_t N>
uint64_t prefix_read_as_one(const Range (&ranges)[N]) {
  uint64_t end = sizeof(Header);
  for (const Range& r : ranges) {
    if (r.length == 0) continue;
    if (r.offset > end && r.offset - end > kMaxMergedGap) break;
    end = std::max(end, r.offset + r.length);
  }
  return std::min(end, kMaxFirstRead);
}

// The parts of the file a copy holds, sorted: what the parser looks at.
struct ContentRanges {
  Range ranges[5];
  explicit ContentRanges(const Plan& plan, uint64_t ring_bytes)
      : ranges{{0, kHeaderSize},
               {plan.comm_offset, plan.comm_count * sizeof(CommEntry)},
               {plan.ring_offset, ring_bytes},
               {plan.callsite_offset, plan.callsite_count * plan.callsite_entry_size},
               {plan.strings_offset, plan.strings_used}} {
    std::sort(std::begin(ranges), std::end(ranges));
  }
};

}  // namespace

pyframes::Result<std::vector<unsigned char>> snapshot_ledger(int fd, uint64_t size, const std::string& source) {
  std::vector<unsigned char> out;
  PYFRAMES_CHECK(snapshot_ledger_into(fd, size, source, out));
  return out;
}

pyframes::Result<void> snapshot_ledger_into(int fd, uint64_t size, const std::string& source, std::vector<unsigned char>& out) {
  SnapshotScratch scratch;
  return snapshot_ledger_into(fd, size, source, out, scratch);
}

pyframes::Result<void> snapshot_ledger_into(int fd, uint64_t size, const std::string& source, std::vector<unsigned char>& out,
                                            SnapshotScratch& scratch) {
  if (size > kMaxLedgerFileSize) {
    return make_error(ErrorKind::Corrupt,
                      fmt::format("{}: {} bytes is implausibly large for a ledger", source, size),
                      "pass a file from HANGSHIM_DIR (default /dev/shm/hangshim-$UID)");
  }
  // Sized, not zeroed: a reused buffer of the same size costs nothing here; what is not copied
  // below is zeroed at the end (Copier::zero_the_rest).
  out.resize(static_cast<size_t>(size));
  scratch.reads = 0;
  Copier copier(fd, size, source, out, scratch.reads);
  Header first{};
  if (size < sizeof(Header)) {
    PYFRAMES_CHECK(copier.copy_in_place(0, size));  // too short for a ledger: the parser says so
    return {};
  }
  // Asked before anything is read: whether the writer's lock was still held (nobody_writes).
  const WriterLock lock = find_writer_lock(fd);
  // Pass 1: the header as published so far, and with it, in the same read, as much of what
  // follows as the last ledger this scratch served needed next (SnapshotScratch::first_read):
  // over a directory of ledgers of one geometry, passes 1 and 2 are one read, and so is the
  // whole copy of a ledger nobody writes. Read into its place in the copy.
  uint64_t first_read = std::clamp<uint64_t>(scratch.first_read, sizeof(Header), std::min(size, kMaxFirstRead));
  PYFRAMES_CHECK(copier.copy_in_place(0, first_read));
  std::memcpy(&first, out.data(), sizeof first);
  Plan plan;
  if (!make_plan(first, size, plan)) {
    // Not a ledger we can take apart (or not published yet): the parser judges the copy, with
    // the magic as first seen (a header published meanwhile may be half in this copy).
    PYFRAMES_CHECK(copier.copy_in_place(first_read, size - first_read));
    std::memcpy(out.data(), first.magic, sizeof first.magic);
    return {};
  }
  uint64_t records = std::min(plan.ring_head, plan.ring_capacity);
  uint64_t ring_bytes = records * sizeof(RingEntry);
  ContentRanges contents(plan, ring_bytes);
  if (nobody_writes(first, lock)) {
    // Nothing changes under this copy: pass 1 and what it did not reach are the whole of it.
    CopyRuns rest([&](uint64_t offset, uint64_t length) { return copier.copy_in_place(offset, length); });
    for (const Range& r : contents.ranges) {
      uint64_t begin = std::max(r.offset, first_read);
      uint64_t end = r.offset + r.length;
      if (end > begin) PYFRAMES_CHECK(rest.add(begin, end - begin));
    }
    PYFRAMES_CHECK(rest.flush());
    copier.zero_the_rest();
    scratch.first_read = prefix_read_as_one(contents.ranges);
    return {};
  }
  // A ledger that may be changing: pass 1's bytes are the "before" copy of the passes below.
  if (scratch.early.size() < first_read) scratch.early.resize(first_read);
  std::memcpy(scratch.early.data(), out.data(), first_read);
  // The ring slots of the newest min(head, capacity) records are slots 0.. (one run either way).
  // Pass 2: the state words of the entries the counts cover, and the stamps of those ring
  // slots before their contents are copied (each read with its whole entry, in as few reads as
  // their places allow; only the states and stamps are looked at). What pass 1 already read
  // is not read again. That pass 1 read them together with the counts, rather than after
  // them, changes nothing the parser sees: an entry whose state was read before the count that
  // covers it is either published (then complete: its writer published it last) or still
  // empty (skipped, as claimed but unpublished); a ring slot whose stamp was read before the
  // head covered its record holds the stamp of its previous record, which differs from the one
  // pass 3 finds once the new record's writer took the slot (check_ring copies the entry again
  // alone), or equals it while no writer touched the slot yet, and then the contents are the
  // previous record's, with its index, which the parser skips as claimed but not yet written.
  // The order that matters is kept: every copy of passes 1 and 2 comes before pass 3's
  // (loads_in_order).
  Range early_ranges[] = {{plan.comm_offset, plan.comm_count * sizeof(CommEntry)},
                          {plan.ring_offset, ring_bytes},
                          {plan.callsite_offset, plan.callsite_count * plan.callsite_entry_size}};
  std::sort(std::begin(early_ranges), std::end(early_ranges));
  uint64_t early_end = first_read;
  for (const Range& r : early_ranges) early_end = std::max(early_end, r.offset + r.length);
  // make_plan put every section inside the file: early_end <= size. The buffer is indexed by
  // file offset, the header at its start.
  if (scratch.early.size() < early_end) scratch.early.resize(early_end);
  unsigned char* early = scratch.early.data();
  CopyRuns early_runs([&](uint64_t offset, uint64_t length) { return copier.copy(early + offset, length, offset); });
  for (const Range& r : early_ranges) {
    uint64_t begin = std::max(r.offset, first_read);  // the part pass 1 did not read
    uint64_t end = r.offset + r.length;
    if (end > begin) PYFRAMES_CHECK(early_runs.add(begin, end - begin));
  }
  PYFRAMES_CHECK(early_runs.flush());
  scratch.first_read = prefix_read_as_one(early_ranges);
  auto early_at = [&](uint64_t offset) { return early + offset; };
  loads_in_order();
  // Pass 3: contents, the ring slots' included, straight into their place in the copy.
  CopyRuns runs([&](uint64_t offset, uint64_t length) { return copier.copy_in_place(offset, length); });
  for (const Range& r : contents.ranges) PYFRAMES_CHECK(runs.add(r.offset, r.length));
  PYFRAMES_CHECK(runs.flush());
  loads_in_order();
  // Pass 4: the ring slots' stamps after their contents were copied.
  if (scratch.after.size() < ring_bytes) scratch.after.resize(ring_bytes);
  if (ring_bytes > 0) PYFRAMES_CHECK(copier.copy(scratch.after.data(), ring_bytes, plan.ring_offset));
  PYFRAMES_CHECK(copier.check_ring(plan, records, early_at(plan.ring_offset), scratch.after.data()));
  copier.zero_the_rest();
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
    uint64_t at = plan.comm_offset + i * sizeof(CommEntry) + offsetof(CommEntry, state);
    std::memcpy(out.data() + at, early_at(at), 4);
  }
  for (uint64_t i = 0; i < plan.callsite_count; ++i) {
    uint64_t at = plan.callsite_offset + i * plan.callsite_entry_size + offsetof(CallsiteEntry, state);
    std::memcpy(out.data() + at, early_at(at), 4);
  }
  return {};
}

}  // namespace hangshim::ledger
