#include "shim/library_slots.h"

#include <atomic>

#include "shim/real_dlsym.h"

namespace hangshim::shim {

std::atomic<void*> g_real_by_library[kLibrarySlots + 1][static_cast<int>(Entry::Count)];

namespace {

// The link map of the library in each slot (index 0 unused). Slots are never given back: a
// library that is dlclose'd keeps its slot (NCCL is not unloaded in practice).
std::atomic<const void*> g_library_map[kLibrarySlots + 1];

}  // namespace

int library_slot(const void* map) noexcept {
  if (map == nullptr) return 0;
  for (int slot = 1; slot <= kLibrarySlots; ++slot) {
    const void* current = g_library_map[slot].load(std::memory_order_acquire);
    if (current == map) return slot;
    if (current == nullptr) {
      const void* expected = nullptr;
      if (g_library_map[slot].compare_exchange_strong(expected, map, std::memory_order_acq_rel)) return slot;
      if (expected == map) return slot;  // another thread claimed it for the same library
    }
  }
  return 0;
}

void* resolve_in_library(int slot, Entry entry, const char* name, const void* self) noexcept {
  if (slot < 1 || slot > kLibrarySlots) return nullptr;
  // glibc's dlopen handle is the library's link map, so the map serves as the handle; the
  // lookup covers the library and its dependencies, never the global scope, so it cannot
  // find our own wrapper (checked all the same). libc's dlsym: the interposer would give a
  // trampoline back.
  const void* map = g_library_map[slot].load(std::memory_order_acquire);
  void* fn = map != nullptr ? real_dlsym(const_cast<void*>(map), name) : nullptr;
  if (fn == self) fn = nullptr;
  if (fn != nullptr) g_real_by_library[slot][static_cast<int>(entry)].store(fn, std::memory_order_release);
  return fn;
}

// One trampoline per slot and entry point, generated from the table: the slot is a template
// argument, so each trampoline is a plain function with nccl.h's prototype.
#define HANGSHIM_TRAMPOLINE(name, ret, params, args, ...) \
  template <int Slot>                                     \
  ret trampoline_##name params {                          \
    LibraryScope scope(Slot);                             \
    return ::name args;                                   \
  }
HANGSHIM_NCCL_ENTRY_POINTS(HANGSHIM_TRAMPOLINE)
#undef HANGSHIM_TRAMPOLINE

namespace {

#define HANGSHIM_TRAMPOLINE_ADDRESS(name, ...) reinterpret_cast<void*>(&trampoline_##name<Slot>),
template <int Slot>
void* const kSlotTrampolines[] = {HANGSHIM_NCCL_ENTRY_POINTS(HANGSHIM_TRAMPOLINE_ADDRESS)};
#undef HANGSHIM_TRAMPOLINE_ADDRESS

static_assert(kLibrarySlots == 8, "list one row per slot below");
void* const* const kTrampolines[kLibrarySlots + 1] = {
    nullptr,
    kSlotTrampolines<1>, kSlotTrampolines<2>, kSlotTrampolines<3>, kSlotTrampolines<4>,
    kSlotTrampolines<5>, kSlotTrampolines<6>, kSlotTrampolines<7>, kSlotTrampolines<8>,
};

}  // namespace

void* library_trampoline(int slot, Entry entry) noexcept {
  if (slot < 1 || slot > kLibrarySlots || entry >= Entry::Count) return nullptr;
  return kTrampolines[slot][static_cast<int>(entry)];
}

}  // namespace hangshim::shim
