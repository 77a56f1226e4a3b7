// The real NCCL behind each entry point, resolved once per entry point on first use:
// dlsym(RTLD_NEXT) (the library after us in the lookup order: the normal LD_PRELOAD case),
// then the already-loaded libnccl.so.2 by handle (NCCL dlopen'ed later, RTLD_LOCAL), then its
// profiling name pnccl*, and as the last resort loading libnccl.so.2 ourselves. A failed
// resolution is not cached: NCCL may be loaded later.
#pragma once

#include <atomic>

#include "shim/entry_points.h"

namespace hangshim::shim {

enum class Entry : int {
#define HANGSHIM_ENTRY_ENUM(name, ...) name,
  HANGSHIM_NCCL_ENTRY_POINTS(HANGSHIM_ENTRY_ENUM)
#undef HANGSHIM_ENTRY_ENUM
      Count
};

extern std::atomic<void*> g_real[static_cast<int>(Entry::Count)];

// Callers that looked NCCL up through their own handle (dlsym(handle, "ncclAllReduce"), e.g.
// ctypes.CDLL(path)) get a per-library trampoline (library_slots.h) that sets this thread's
// library slot for the duration of the call; 0 (every other call) means the library found by
// resolve_real. Initial-exec TLS: one read on the hot path, no __tls_get_addr.
inline constexpr int kLibrarySlots = 8;
__attribute__((tls_model("initial-exec"))) inline thread_local int t_library_slot = 0;
// The real functions of the library in each slot (index 0 unused), filled by the dlsym
// interposer with what the program was given and lazily for the entry points it was not (NCCL
// calling its own API through its PLT lands in our wrappers while the slot is set).
extern std::atomic<void*> g_real_by_library[kLibrarySlots + 1][static_cast<int>(Entry::Count)];
void* resolve_in_library(int slot, Entry entry, const char* name, const void* self) noexcept;

// Resolves `name`; never returns `self` (our own wrapper). nullptr if NCCL has no such symbol.
void* resolve_real(Entry entry, const char* name, const void* self) noexcept;

// The real function for an entry point, typed as nccl.h declares it.
template <Entry E, class Fn>
inline Fn real_function(const char* name, Fn self) noexcept {
  if (int slot = t_library_slot; __builtin_expect(slot != 0, 0)) {
    void* fn = g_real_by_library[slot][static_cast<int>(E)].load(std::memory_order_acquire);
    if (fn == nullptr) fn = resolve_in_library(slot, E, name, reinterpret_cast<const void*>(self));
    return reinterpret_cast<Fn>(fn);
  }
  void* fn = g_real[static_cast<int>(E)].load(std::memory_order_acquire);
  if (__builtin_expect(fn == nullptr, 0)) fn = resolve_real(E, name, reinterpret_cast<const void*>(self));
  return reinterpret_cast<Fn>(fn);
}

#define HANGSHIM_REAL(name) ::hangshim::shim::real_function<::hangshim::shim::Entry::name>(#name, &::name)

// What a wrapper returns when NCCL has no such function (warned once): NCCL's own error.
ncclResult_t missing_nccl(const char* name) noexcept;

}  // namespace hangshim::shim
