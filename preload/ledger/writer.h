// Writes one process's ledger: creates the file (0600, O_EXCL|O_NOFOLLOW), reserves its pages
// (a full /dev/shm fails here, at creation, instead of SIGBUS later), maps it and publishes
// the header. Recording methods are lock-free and allocation-free; only add_callsite (strings)
// allocates, and its callers serialize it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "ledger/access.h"
#include "ledger/format.h"
#include "ledger/identity.h"
#include "pyframes/result.h"

namespace hangshim::ledger {

struct Geometry {
  uint32_t ring_capacity = 8192;  // rounded up to a power of two
  uint32_t comm_capacity = 1024;
  uint32_t callsite_capacity = 1024;
  uint32_t callsite_depth = 16;
  uint32_t strings_size = 512 * 1024;
};

// A communicator entry to add: its identity (identity.h), how its key was made, its first state.
struct CommInit : CommIdentity {
  KeyKind key_kind = KeyKind::None;
  CommState state = CommState::Initializing;
  std::string_view name;
};

struct RecordStart {
  Op op = Op::None;
  uint8_t dtype = 255;
  uint16_t flags = 0;
  int32_t peer = -1;
  int32_t red_op = -1;
  uint32_t comm = 0;
  uint32_t callsite = 0;
  uint32_t thread = 0;
  uint64_t comm_key = 0;
  uint64_t seq = 0;
  uint64_t count = 0;
  uint64_t stream = 0;
  uint64_t callsite_hit = 0;
  uint64_t group = 0;
  uint64_t issued_ns = 0;
};

struct FrameText {
  std::string_view file;
  std::string_view function;
  int32_t line = 0;
  uint32_t flags = 0;  // FrameFlag
};

// Computes section offsets and the file size for a geometry (the reader checks the same rules).
struct Layout {
  uint64_t comm_offset, ring_offset, callsite_offset, strings_offset, file_size;
  uint32_t ring_capacity, callsite_entry_size;
};
Layout compute_layout(const Geometry& geometry);

class Writer {
 public:
  static pyframes::Result<std::unique_ptr<Writer>> create(const std::string& path, const Geometry& geometry,
                                                          const Identity& identity);
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  const std::string& path() const { return path_; }
  // A fork child's copy: unmaps and closes without touching anything else (another thread of
  // the parent may have been using the writer when it forked). The object must not be used.
  void abandon() noexcept;
  Header& header() noexcept { return *header_; }
  uint64_t file_size() const noexcept { return size_; }

  // --- communicators -------------------------------------------------------------------
  // Returns the comm id (slot + 1), or 0 when the table is full (counted in dropped_comms).
  uint32_t add_comm(const CommInit& init) noexcept;
  CommEntry* comm(uint32_t id) noexcept {
    return id == 0 || id > comm_capacity_ ? nullptr : &comms_[id - 1];
  }

  // --- the ring (hot path) -------------------------------------------------------------
  uint64_t begin_record(const RecordStart& start) noexcept {
    uint64_t index = fetch_add_relaxed(header_->ring_head, uint64_t{1}) + 1;
    RingEntry& e = slot(index);
    uint64_t locked = stamp_lock(e.stamp);
    if (load_relaxed(e.index) > index) {
      // Preempted for a whole lap of the ring between claiming and writing: a newer record is
      // already here, and it stays (this one's return and completion find it gone).
      stamp_unlock(e.stamp, locked);
      return index;
    }
    store_relaxed(e.index, index);
    store_relaxed(e.seq, start.seq);
    store_relaxed(e.count, start.count);
    store_relaxed(e.stream, start.stream);
    store_relaxed(e.issued_ns, start.issued_ns);
    store_relaxed(e.returned_ns, uint64_t{0});
    store_relaxed(e.completed_ns, uint64_t{0});
    store_relaxed(e.callsite_hit, start.callsite_hit);
    store_relaxed(e.group, start.group);
    store_relaxed(e.comm_key, start.comm_key);
    store_relaxed(e.comm, start.comm);
    store_relaxed(e.callsite, start.callsite);
    store_relaxed(e.peer, start.peer);
    store_relaxed(e.red_op, start.red_op);
    store_relaxed(e.result, int32_t{-1});
    store_relaxed(e.thread, start.thread);
    store_relaxed(e.op, static_cast<uint8_t>(start.op));
    store_relaxed(e.dtype, start.dtype);
    store_relaxed(e.flags, start.flags);
    stamp_unlock(e.stamp, locked);
    return index;
  }

  // The call returned. `completed_ns` != 0 also marks it complete (no event to wait for).
  // A record already overwritten by a newer one (the ring wrapped) is left alone. Times never
  // go before the issue time: a thread that moved to another CPU between the two reads may
  // see a TSC a few ns behind.
  void record_returned(uint64_t index, uint64_t returned_ns, int32_t result, uint16_t add_flags,
                       uint64_t completed_ns) noexcept {
    RingEntry& e = slot(index);
    uint64_t locked = stamp_lock(e.stamp);
    if (load_relaxed(e.index) == index) {
      uint64_t issued_ns = load_relaxed(e.issued_ns);
      store_relaxed(e.returned_ns, returned_ns < issued_ns ? issued_ns : returned_ns);
      store_relaxed(e.result, result);
      store_relaxed(e.flags, static_cast<uint16_t>(load_relaxed(e.flags) | add_flags));
      if (completed_ns != 0) store_relaxed(e.completed_ns, completed_ns < issued_ns ? issued_ns : completed_ns);
    }
    stamp_unlock(e.stamp, locked);
  }

  // Marks a record complete (completed_ns != 0) and/or adds flags to it.
  void record_completed(uint64_t index, uint64_t completed_ns, uint16_t add_flags = 0) noexcept {
    RingEntry& e = slot(index);
    uint64_t locked = stamp_lock(e.stamp);
    if (load_relaxed(e.index) == index) {
      uint64_t issued_ns = load_relaxed(e.issued_ns);
      if (completed_ns != 0) store_relaxed(e.completed_ns, completed_ns < issued_ns ? issued_ns : completed_ns);
      if (add_flags != 0) store_relaxed(e.flags, static_cast<uint16_t>(load_relaxed(e.flags) | add_flags));
    }
    stamp_unlock(e.stamp, locked);
  }

  // A call that returned ncclInProgress is settled: its final result, and completed_ns != 0
  // when it is done (0: completion is tracked from now on).
  void record_settled(uint64_t index, int32_t result, uint64_t completed_ns, uint16_t add_flags) noexcept {
    RingEntry& e = slot(index);
    uint64_t locked = stamp_lock(e.stamp);
    if (load_relaxed(e.index) == index) {
      uint64_t issued_ns = load_relaxed(e.issued_ns);
      store_relaxed(e.result, result);
      if (completed_ns != 0) store_relaxed(e.completed_ns, completed_ns < issued_ns ? issued_ns : completed_ns);
      store_relaxed(e.flags, static_cast<uint16_t>(load_relaxed(e.flags) | add_flags));
    }
    stamp_unlock(e.stamp, locked);
  }

  // In-process torn-free copy of the slot that record `index` maps to (the watchdog); false if
  // it is being written right now. out.index says which record the slot holds: `index`, a
  // newer one (the ring wrapped past it) or an older one (claimed but not yet written).
  bool read_slot(uint64_t index, RingEntry& out) const noexcept {
    return read_ring_entry(ring_[(index - 1) & ring_mask_], out, 1000);
  }

  uint64_t ring_head() const noexcept { return load_acquire(header_->ring_head); }
  uint32_t ring_capacity() const noexcept { return ring_mask_ + 1; }

  // --- call-sites ----------------------------------------------------------------------
  // Interns a call-site; returns its id, or 0 when the table or the string pool is full.
  // Not thread-safe: callers serialize (it is the rare, allocating path).
  uint32_t add_callsite(std::span<const FrameText> frames, int16_t user_frame, uint32_t flags,
                        uint64_t now_ns);
  // Counts a sighting; returns the new hit count (1 on the first).
  uint64_t hit_callsite(uint32_t id) noexcept {
    CallsiteEntry* entry = callsite(id);
    return entry == nullptr ? 0 : fetch_add_relaxed(entry->hits, uint64_t{1}) + 1;
  }
  // Takes back one sighting (a call that never ran: its group ended simulated).
  void give_back_callsite_hit(uint32_t id) noexcept {
    if (CallsiteEntry* entry = callsite(id)) fetch_add_relaxed(entry->hits, ~uint64_t{0});
  }
  CallsiteEntry* callsite(uint32_t id) noexcept {
    if (id == 0 || id > callsite_capacity_) return nullptr;
    return reinterpret_cast<CallsiteEntry*>(callsites_ + (id - 1) * callsite_entry_size_);
  }

  // --- process state -------------------------------------------------------------------
  void set_state(ProcessState state) noexcept { store_release(header_->state, static_cast<uint32_t>(state)); }
  void heartbeat(uint64_t now_ns) noexcept { store_relaxed(header_->heartbeat_ns, now_ns); }
  void add_features(uint32_t features) noexcept { __atomic_fetch_or(&header_->features, features, __ATOMIC_RELAXED); }
  // The process's first failed call (format.h, Header::error_state): `text` is read up to
  // kErrorTextMax bytes (strnlen: it need not be terminated). Later calls do nothing; false then.
  bool set_first_error(uint64_t record, int32_t result, Op op, const char* text, uint32_t record_flags = 0) noexcept;
  // Text fields written after publication (readers may see them half-written; they are
  // informational and written once, before the state change that makes them interesting).
  void set_text(char* field, size_t capacity, std::string_view text) noexcept;

 private:
  Writer() = default;
  RingEntry& slot(uint64_t index) noexcept { return ring_[(index - 1) & ring_mask_]; }
  StringRef intern(std::string_view text);

  std::string path_;
  int fd_ = -1;
  void* base_ = nullptr;
  uint64_t size_ = 0;
  Header* header_ = nullptr;
  CommEntry* comms_ = nullptr;
  uint32_t comm_capacity_ = 0;
  RingEntry* ring_ = nullptr;
  uint64_t ring_mask_ = 0;
  unsigned char* callsites_ = nullptr;
  uint32_t callsite_capacity_ = 0;
  uint32_t callsite_depth_ = 0;
  size_t callsite_entry_size_ = 0;
  unsigned char* strings_ = nullptr;
  uint32_t strings_size_ = 0;
  std::unordered_map<std::string, StringRef> interned_;
};

}  // namespace hangshim::ledger
