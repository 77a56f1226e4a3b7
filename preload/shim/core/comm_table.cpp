#include "shim/core/comm_table.h"

namespace hangshim::shim {

CommTable::CommTable(uint32_t capacity_pow2) : slots_(new Slot[capacity_pow2]), mask_(capacity_pow2 - 1) {}

bool CommTable::insert(uint64_t handle, uint32_t id) noexcept {
  if (handle == 0 || handle == kTombstone) return false;
  // Same handle already present: update in place.
  for (uint32_t probe = 0, i = slot_of(handle); probe <= mask_; ++probe, i = (i + 1) & mask_) {
    uint64_t seen = slots_[i].handle.load(std::memory_order_acquire);
    if (seen == handle) {
      slots_[i].id.store(id, std::memory_order_release);
      return true;
    }
    if (seen == 0) break;
  }
  // Claim the first empty or tombstone slot. The id is stored before the handle is published,
  // so a lookup that finds the handle finds its id. (Writers are serialized by the caller.)
  for (uint32_t probe = 0, i = slot_of(handle); probe <= mask_; ++probe, i = (i + 1) & mask_) {
    uint64_t seen = slots_[i].handle.load(std::memory_order_relaxed);
    if (seen == 0 || seen == kTombstone) {
      slots_[i].id.store(id, std::memory_order_relaxed);
      slots_[i].handle.store(handle, std::memory_order_release);
      return true;
    }
  }
  return false;
}

void CommTable::erase(uint64_t handle) noexcept {
  if (handle == 0 || handle == kTombstone) return;
  for (uint32_t probe = 0, i = slot_of(handle); probe <= mask_; ++probe, i = (i + 1) & mask_) {
    uint64_t seen = slots_[i].handle.load(std::memory_order_acquire);
    if (seen == handle) {
      slots_[i].handle.store(kTombstone, std::memory_order_release);
      return;
    }
    if (seen == 0) return;
  }
}

}  // namespace hangshim::shim
