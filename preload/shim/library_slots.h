// Per-library forwarding for callers that resolve NCCL through their own handle. A process may
// hold two NCCLs (one in the global scope from PyTorch, one opened privately by ctypes): every
// address the dlsym interposer hands out must forward to the library the program opened. Each
// library (identified by its link map: two handles of one library share it) gets one of
// kLibrarySlots slots, claimed with a CAS (no lock a fork could leave held); each slot has one
// trampoline per entry point that sets t_library_slot around a call to our exported wrapper,
// whose real_function then picks that library's function.
#pragma once

#include "shim/real_nccl.h"

namespace hangshim::shim {

// The slot (1..kLibrarySlots) of the library whose link map is `map`, claiming a free one for
// a new library; 0 when every slot is taken by other libraries.
int library_slot(const void* map) noexcept;

// The trampoline of entry point `entry` for slot 1..kLibrarySlots.
void* library_trampoline(int slot, Entry entry) noexcept;

// Sets this thread's library slot for one call (restored after: a call can nest in another).
class LibraryScope {
 public:
  explicit LibraryScope(int slot) noexcept : saved_(t_library_slot) { t_library_slot = slot; }
  ~LibraryScope() { t_library_slot = saved_; }
  LibraryScope(const LibraryScope&) = delete;
  LibraryScope& operator=(const LibraryScope&) = delete;

 private:
  int saved_;
};

}  // namespace hangshim::shim
