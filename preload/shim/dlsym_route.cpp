// The decision behind the dlsym/dlvsym interposer (dlsym_entry.cpp): hand the program our
// wrapper (a per-library trampoline) for an NCCL entry point it looks up through its own
// handle, and nothing otherwise, in which case the entry jumps into libc's dlsym with the
// program's own return address, so every other lookup, RTLD_NEXT included, is answered
// exactly as without the shim.
#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstring>
#include <string>

#include "shim/core/log.h"
#include "shim/library_slots.h"
#include "shim/real_dlsym.h"

namespace hangshim::shim {
namespace {

#define HANGSHIM_ENTRY_NAME(name, ...) #name,
const char* const kEntryNames[] = {HANGSHIM_NCCL_ENTRY_POINTS(HANGSHIM_ENTRY_NAME)};
#undef HANGSHIM_ENTRY_NAME

// Entry::Count for names that are not one of our entry points. Most lookups fail the prefix.
Entry entry_named(const char* name) {
  if (std::strncmp(name, "nccl", 4) != 0) return Entry::Count;
  for (int i = 0; i < static_cast<int>(Entry::Count); ++i) {
    if (std::strcmp(kEntryNames[i], name) == 0) return static_cast<Entry>(i);
  }
  return Entry::Count;
}

const void* link_map_of(const void* address) {
  Dl_info info;
  void* map = nullptr;
  if (dladdr1(address, &info, &map, RTLD_DL_LINKMAP) == 0) return nullptr;
  return map;
}

// Atomic rather than a function-local static: no guard a fork could leave taken.
std::atomic<const void*> g_own_link_map{nullptr};
const void* own_link_map() {
  const void* map = g_own_link_map.load(std::memory_order_acquire);
  if (map == nullptr) {
    map = link_map_of(reinterpret_cast<const void*>(&own_link_map));
    g_own_link_map.store(map, std::memory_order_release);
  }
  return map;
}

void* route(void* handle, const char* name, const char* version) noexcept {
  DlsymFn libc = libc_dlsym();
  DlvsymFn libcv = libc_dlvsym();
  if (libc == nullptr || libcv == nullptr) {
    warn_once("libc's dlsym was not found: NCCL looked up by handle is not recorded");
    return nullptr;
  }
  // RTLD_DEFAULT finds our wrappers in the global scope already; RTLD_NEXT depends on the
  // caller and must reach libc untouched.
  if (name == nullptr || handle == RTLD_DEFAULT || handle == RTLD_NEXT) return nullptr;
  const Entry entry = entry_named(name);
  if (entry == Entry::Count) return nullptr;
  void* real = version != nullptr ? libcv(handle, name, version) : libc(handle, name);
  if (real == nullptr) return nullptr;  // libc answers again, with its own dlerror()
  const void* map = link_map_of(real);
  if (map == nullptr || map == own_link_map()) return nullptr;  // already ours (a handle whose scope has us)
  const int slot = library_slot(map);
  if (slot == 0) {
    warn_once("more than 8 NCCL libraries looked up by handle: calls through the others are not recorded");
    return nullptr;
  }
  g_real_by_library[slot][static_cast<int>(entry)].store(real, std::memory_order_release);
  return library_trampoline(slot, entry);
}

}  // namespace
}  // namespace hangshim::shim

// Called by the assembly entries; nullptr means "let libc answer".
extern "C" __attribute__((visibility("hidden"))) void* hangshim_dlsym_route(void* handle, const char* name,
                                                                             const char* version) noexcept {
  return hangshim::shim::route(handle, name, version);
}
