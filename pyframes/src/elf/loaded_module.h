// An ELF file as it is mapped in a target: the file plus its load bias, computed from the
// file's PT_LOAD headers and the target's mappings of that file. Turns link-time addresses
// (symbol values, section addresses) into target addresses.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "elf/elf_file.h"
#include "pyframes/module_map.h"
#include "pyframes/result.h"
#include "pyframes/target.h"

namespace pyframes {

// The load bias of `elf` given the target's mappings of it (in address order): for a mapping
// at file offset F placed at address A, the PT_LOAD containing F gives bias = A - (vaddr of F).
// Executables (ET_EXEC) have bias 0. nullopt when no mapping matches a segment.
std::optional<uint64_t> compute_load_bias(const ElfFile& elf, const std::vector<Mapping>& mappings);

class LoadedModule {
 public:
  // `target_path` as the module map names it; the file is opened at resolve(target_path).
  static Result<LoadedModule> open(const ModuleMap& modules, const std::string& target_path,
                                   const FileResolver& resolve);

  const std::string& target_path() const { return target_path_; }
  const ElfFile& elf() const { return *elf_; }
  uint64_t bias() const { return bias_; }

  // Target address of a symbol (.dynsym first, then .symtab), nullopt when absent.
  std::optional<uint64_t> symbol_address(std::string_view name, bool dynsym_only = false) const;
  // Writable data (the writable PT_LOAD segments: .data, .bss, .PyRuntime...) as target ranges.
  std::vector<AddressRange> writable_data() const;

 private:
  std::string target_path_;
  std::unique_ptr<ElfFile> elf_;
  uint64_t bias_ = 0;
};

}  // namespace pyframes
