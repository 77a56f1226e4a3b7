// ncclComm_t -> ledger communicator id, looked up on every call: a fixed-size, lock-free,
// open-addressing table. Insertions and erasures (communicator creation and destruction) are
// rare and serialized by the caller; lookups from any thread may race with them. A destroyed
// communicator's slot becomes a tombstone that a later one reuses, so the table never fills
// up with dead handles.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace hangshim::shim {

class CommTable {
 public:
  static constexpr uint32_t kNotRecorded = UINT32_MAX;  // known, but the ledger's table was full

  explicit CommTable(uint32_t capacity_pow2 = 8192);

  // The id for `handle`, or 0 when unknown. Wait-free.
  uint32_t find(uint64_t handle) const noexcept {
    if (handle == 0 || handle == kTombstone) return 0;
    for (uint32_t probe = 0, i = slot_of(handle); probe <= mask_; ++probe, i = (i + 1) & mask_) {
      uint64_t seen = slots_[i].handle.load(std::memory_order_acquire);
      if (seen == handle) return slots_[i].id.load(std::memory_order_acquire);
      if (seen == 0) return 0;
    }
    return 0;
  }

  // Maps `handle` to `id` (replacing an older mapping of the same handle). False if full.
  bool insert(uint64_t handle, uint32_t id) noexcept;
  // Forgets `handle` (after ncclCommDestroy/Abort: NCCL may hand the same address out again).
  void erase(uint64_t handle) noexcept;

 private:
  static constexpr uint64_t kTombstone = 1;  // never a valid ncclComm_t (pointers are aligned)
  struct Slot {
    std::atomic<uint64_t> handle{0};
    std::atomic<uint32_t> id{0};
  };
  uint32_t slot_of(uint64_t handle) const noexcept {
    uint64_t h = handle * 0x9e3779b97f4a7c15ull;
    return static_cast<uint32_t>(h >> 40) & mask_;
  }

  std::unique_ptr<Slot[]> slots_;
  uint32_t mask_;
};

}  // namespace hangshim::shim
