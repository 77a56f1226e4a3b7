// The calling thread's own frames, read in place: the shim's call-site capture at every NCCL
// call. A SelfMemory in Table mode decides what is readable; this reader asks it once per page
// and remembers the answer per thread, so a frame walk's reads (a frame header, a code
// object's header, ~30 of them per call-site) become a few compares and loads the compiler
// inlines, instead of a virtual call and a copy each.
//
// As safe as the table it asks: mappings are whole pages, so a page the table vouched for is
// readable as long as the table's view holds; the remembered pages are dropped whenever the
// table is re-read (its refresh count moves), exactly as SelfMemory's own recent ranges are.
// Only for memory no other thread unmaps meanwhile (the calling thread's frames and the code
// objects they hold), as for Table mode itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "pyframes/memory.h"
#include "pyframes/self_memory.h"

namespace pyframes {

// Pages vouched for, per thread (direct-mapped by page number; 0: empty). Small: initial-exec
// TLS comes from glibc's static TLS reserve when the library is dlopen'ed (the benchmark probe).
struct OwnPages {
  static constexpr size_t kSlots = 32;
  const SelfMemory* owner = nullptr;
  uint64_t generation = 0;
  uint64_t code_type = 0;       // the `code` type's address, once a walk has checked it
  uint64_t pages[kSlots] = {};  // page number + 1
};
__attribute__((tls_model("initial-exec"))) inline constinit thread_local OwnPages t_own_pages;

class OwnFramesMemory final {
 public:
  static constexpr uint64_t kPageShift = 12;

  // `table` must be in Table mode (collect_own_code_locations checks).
  explicit OwnFramesMemory(const SelfMemory& table) noexcept : table_(table), pages_(t_own_pages) {
    uint64_t generation = table.refresh_count();
    if (pages_.owner != &table || pages_.generation != generation) {
      pages_ = OwnPages{};
      pages_.owner = &table;
      pages_.generation = generation;
    }
  }

  // The code type a walk found, kept for the thread's next walks (the same table's view).
  uint64_t known_code_type() const noexcept { return pages_.code_type; }
  void remember_code_type(uint64_t type) const noexcept { pages_.code_type = type; }

  // A pointer to `size` bytes at `address` (size <= one page), or nullptr if not readable.
  __attribute__((always_inline)) const void* direct(uint64_t address, size_t size) const noexcept {
    if (address == 0 || size == 0 || size > (uint64_t{1} << kPageShift) || address + size < address) return nullptr;
    uint64_t first = address >> kPageShift;
    uint64_t last = (address + size - 1) >> kPageShift;
    if (!vouched(first) || (last != first && !vouched(last))) return nullptr;
    return reinterpret_cast<const void*>(static_cast<uintptr_t>(address));
  }

  __attribute__((always_inline)) ReadStatus read(uint64_t address, void* out, size_t size) const noexcept {
    if (size == 0) return ReadStatus::Ok;
    if (const void* in = direct(address, size)) {
      switch (size) {  // the walker's single-field reads: one move each
        case 1: std::memcpy(out, in, 1); break;
        case 4: std::memcpy(out, in, 4); break;
        case 8: std::memcpy(out, in, 8); break;
        default: std::memcpy(out, in, size); break;
      }
      return ReadStatus::Ok;
    }
    return table_.read(address, out, size);  // larger than a page, or not readable: its answer
  }

 private:
  __attribute__((always_inline)) bool vouched(uint64_t page) const noexcept {
    return pages_.pages[page & (OwnPages::kSlots - 1)] == page + 1 || ask_table(page);
  }

  // A page not remembered: one read through the table, remembered if it succeeds.
  __attribute__((noinline)) bool ask_table(uint64_t page) const noexcept {
    unsigned char first_byte = 0;
    if (table_.read(page << kPageShift, &first_byte, 1) != ReadStatus::Ok) return false;
    pages_.pages[page & (OwnPages::kSlots - 1)] = page + 1;
    return true;
  }

  const SelfMemory& table_;
  OwnPages& pages_;
};

}  // namespace pyframes
