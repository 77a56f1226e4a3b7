// Memory over a core: bytes the core holds come from its PT_LOAD segments (pread on demand,
// never the whole file), bytes it left out from the files NT_FILE names, through MappedFiles.
// A page is taken from a file only where that is what the process saw: mappings the dumper
// skipped (never written, so identical to the file) and read-only pages cut off the end of a
// truncated core. Written pages of writable mappings are the core's or nothing.
#pragma once

#include <cstdint>
#include <string>

#include "core/core_file.h"
#include "core/mapped_files.h"
#include "pyframes/memory.h"
#include "pyframes/module_map.h"

namespace pyframes::core {

class CoreMemory final : public Memory {
 public:
  CoreMemory(const CoreFile& core, const ModuleMap& modules, const MappedFiles* files)
      : core_(core), modules_(modules), files_(files) {}

  ReadStatus read(uint64_t address, void* out, size_t size) const noexcept override;
  std::string describe() const override;

  // Only bytes present in the core file itself.
  ReadStatus read_dumped(uint64_t address, void* out, size_t size) const noexcept;

  void set_files(const MappedFiles* files) { files_ = files; }

 private:
  // Reads `size` bytes at `address` from the file that `mapping` maps; all within the mapping.
  ReadStatus read_backing(const Mapping& mapping, uint64_t address, unsigned char* out, size_t size) const;
  ReadStatus read_impl(uint64_t address, unsigned char* out, size_t size, bool dumped_only) const;

  const CoreFile& core_;
  const ModuleMap& modules_;
  const MappedFiles* files_;  // null: only the core's own bytes are readable
};

}  // namespace pyframes::core
