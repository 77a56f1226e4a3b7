#include "core/core_memory.h"

#include <elf.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>

namespace pyframes::core {

namespace {

constexpr uint64_t kPage = 4096;

bool is_file_path(const std::string& path) { return !path.empty() && path.front() == '/'; }

}  // namespace

std::string CoreMemory::describe() const { return fmt::format("core {}", core_.path()); }

ReadStatus CoreMemory::read(uint64_t address, void* out, size_t size) const noexcept {
  try {
    return read_impl(address, static_cast<unsigned char*>(out), size, false);
  } catch (const std::bad_alloc&) {
    return ReadStatus::IoError;
  } catch (...) {
    return ReadStatus::IoError;
  }
}

ReadStatus CoreMemory::read_dumped(uint64_t address, void* out, size_t size) const noexcept {
  try {
    return read_impl(address, static_cast<unsigned char*>(out), size, true);
  } catch (...) {
    return ReadStatus::IoError;
  }
}

ReadStatus CoreMemory::read_backing(const Mapping& mapping, uint64_t address, unsigned char* out, size_t size) const {
  if (files_ == nullptr || !is_file_path(mapping.path)) return ReadStatus::Unmapped;
  const LocalFile* file = files_->find(mapping.path);
  if (file == nullptr) return ReadStatus::Unmapped;
  uint64_t offset = mapping.file_offset + (address - mapping.start);
  // The kernel maps the tail of a file's last page as zeros; beyond that page a process faults.
  uint64_t page_end = (file->size + kPage - 1) / kPage * kPage;
  if (offset >= page_end || size > page_end - offset) return ReadStatus::Unmapped;
  size_t available = offset < file->size ? static_cast<size_t>(std::min<uint64_t>(size, file->size - offset)) : 0;
  if (available > 0 && !pread_exact(file->fd.get(), out, available, offset)) return ReadStatus::IoError;
  std::memset(out + available, 0, size - available);
  return ReadStatus::Ok;
}

ReadStatus CoreMemory::read_impl(uint64_t address, unsigned char* out, size_t size, bool dumped_only) const {
  if (size == 0) return ReadStatus::Ok;
  if (address + size < address) return ReadStatus::Unmapped;
  while (size > 0) {
    const Segment* segment = core_.find_segment(address);
    const Mapping* mapping = modules_.find(address);
    size_t chunk = size;
    ReadStatus status = ReadStatus::Unmapped;
    if (segment != nullptr) {
      uint64_t inside = address - segment->vaddr;
      chunk = static_cast<size_t>(std::min<uint64_t>(chunk, segment->memsz - inside));
      if (inside < segment->filesz) {
        chunk = static_cast<size_t>(std::min<uint64_t>(chunk, segment->filesz - inside));
        status = core_.read_file_bytes(segment->offset + inside, out, chunk);
        // Cut off the end of a truncated core: read-only file pages are still what the file holds.
        bool from_file = status == ReadStatus::Unmapped && (segment->flags & PF_W) == 0;
        if (from_file && !dumped_only && mapping != nullptr) {
          chunk = static_cast<size_t>(std::min<uint64_t>(chunk, mapping->end - address));
          status = read_backing(*mapping, address, out, chunk);
        }
      } else if (!dumped_only && mapping != nullptr) {
        // Left out by the dumper: never written since it was mapped, so the file's bytes.
        chunk = static_cast<size_t>(std::min<uint64_t>(chunk, mapping->end - address));
        status = read_backing(*mapping, address, out, chunk);
      }
    } else if (!dumped_only && mapping != nullptr) {
      // gcore omits whole mappings it considers unmodified file data.
      chunk = static_cast<size_t>(std::min<uint64_t>(chunk, mapping->end - address));
      status = read_backing(*mapping, address, out, chunk);
    }
    if (status != ReadStatus::Ok) return status;
    address += chunk;
    out += chunk;
    size -= chunk;
  }
  return ReadStatus::Ok;
}

}  // namespace pyframes::core
