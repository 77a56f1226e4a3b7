// An ELF file's initialised data as memory at its link-time addresses: what a process that
// mapped the file would show there before writing to it.
#pragma once

#include <cstring>
#include <string>
#include <string_view>

#include "elf/elf_file.h"
#include "pyframes/memory.h"

class FileMemory final : public pyframes::Memory {
 public:
  explicit FileMemory(const pyframes::ElfFile& elf) : elf_(elf) {}
  pyframes::ReadStatus read(uint64_t address, void* out, size_t size) const noexcept override {
    std::string_view bytes = elf_.bytes_at(address, size);
    if (bytes.size() != size) return pyframes::ReadStatus::Unmapped;
    std::memcpy(out, bytes.data(), size);
    return pyframes::ReadStatus::Ok;
  }
  std::string describe() const override { return elf_.path(); }

 private:
  const pyframes::ElfFile& elf_;
};
