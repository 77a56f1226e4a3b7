#include "native/page_cache.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace pyframes::native {

PageCache::PageCache(const Memory& inner, size_t max_pages) : inner_(inner), max_pages_(max_pages) {}

const PageCache::Page* PageCache::page(uint64_t page_address) const noexcept {
  if (auto it = pages_.find(page_address); it != pages_.end()) return it->second.get();
  if (pages_.size() >= max_pages_) return nullptr;
  try {
    auto bytes = std::make_unique<Page>();
    if (inner_.read(page_address, bytes->data(), kPageSize) != ReadStatus::Ok) bytes.reset();
    return pages_.emplace(page_address, std::move(bytes)).first->second.get();
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

ReadStatus PageCache::read(uint64_t address, void* out, size_t size) const noexcept {
  auto* dest = static_cast<unsigned char*>(out);
  while (size > 0) {
    const uint64_t page_address = address & ~(kPageSize - 1);
    const uint64_t in_page = address - page_address;
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(size, kPageSize - in_page));
    if (const Page* cached = page(page_address)) {
      std::memcpy(dest, cached->data() + in_page, chunk);
    } else {
      // Part of the page may still be readable (a mapping's last bytes): read exactly that.
      ReadStatus status = inner_.read(address, dest, chunk);
      if (status != ReadStatus::Ok) return status;
    }
    dest += chunk;
    address += chunk;
    size -= chunk;
  }
  return ReadStatus::Ok;
}

}  // namespace pyframes::native
