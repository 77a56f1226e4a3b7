// A page cache in front of any Memory, for the native unwinder: libunwind reads a word at a
// time (stack slots, unwind-table entries, FDE bytes), thousands of reads per dump over a few
// dozen pages. Valid only while the target does not change: one per dump of a stopped process
// or a core. Used by one thread at a time.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "pyframes/memory.h"

namespace pyframes::native {

class PageCache final : public Memory {
 public:
  explicit PageCache(const Memory& inner, size_t max_pages = 4096);

  ReadStatus read(uint64_t address, void* out, size_t size) const noexcept override;
  std::string describe() const override { return inner_.describe(); }

 private:
  static constexpr uint64_t kPageSize = 4096;
  using Page = std::array<unsigned char, kPageSize>;
  // The cached page at `page` (page-aligned), reading it on first use; nullptr when the whole
  // page cannot be read (the end of a mapping) or the cache is full.
  const Page* page(uint64_t page) const noexcept;

  const Memory& inner_;
  size_t max_pages_;
  mutable std::unordered_map<uint64_t, std::unique_ptr<Page>> pages_;  // nullptr: unreadable as a whole
};

}  // namespace pyframes::native
