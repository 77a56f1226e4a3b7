#include "elf/loaded_module.h"

#include <fmt/format.h>

namespace pyframes {

std::optional<uint64_t> compute_load_bias(const ElfFile& elf, const std::vector<Mapping>& mappings) {
  if (!elf.is_shared_object()) return 0;
  constexpr uint64_t kPageMask = ~static_cast<uint64_t>(0xfff);
  for (const auto& m : mappings) {
    for (const auto& seg : elf.segments()) {
      // The kernel maps each PT_LOAD from its page-aligned file offset at its page-aligned vaddr.
      if ((seg.offset & kPageMask) == m.file_offset && seg.filesz > 0) return m.start - (seg.vaddr & kPageMask);
    }
  }
  return std::nullopt;
}

Result<LoadedModule> LoadedModule::open(const ModuleMap& modules, const std::string& target_path,
                                        const FileResolver& resolve) {
  LoadedModule module;
  module.target_path_ = target_path;
  std::string local_path = resolve ? resolve(target_path) : target_path;
  auto elf = ElfFile::open(local_path);
  if (!elf) {
    Error error = elf.take_error();
    if (error.kind == ErrorKind::NotFound && error.hint.empty()) {
      error.hint = "the target runs a file that is no longer on disk here (upgraded, deleted, or in another "
                   "container): make it available at the same path";
    }
    return error;
  }
  module.elf_ = std::move(elf.value());
  auto bias = compute_load_bias(*module.elf_, modules.mappings_of(target_path));
  if (!bias) {
    return make_error(ErrorKind::Corrupt,
                      fmt::format("{}: no mapping in the target matches the file's load segments", target_path),
                      "the file on disk may differ from the one the process loaded");
  }
  module.bias_ = *bias;
  return module;
}

std::optional<uint64_t> LoadedModule::symbol_address(std::string_view name, bool dynsym_only) const {
  auto sym = elf_->find_symbol(name, dynsym_only);
  if (!sym) return std::nullopt;
  return sym->value + bias_;
}

std::vector<AddressRange> LoadedModule::writable_data() const {
  // The writable PT_LOAD segments: .data and .bss, and also sections such as .PyRuntime
  // (3.8-3.10 put _PyRuntime in a section of its own).
  std::vector<AddressRange> out;
  for (const auto& seg : elf_->segments()) {
    if (seg.writable && seg.memsz > 0) out.push_back({seg.vaddr + bias_, seg.vaddr + seg.memsz + bias_});
  }
  return out;
}

}  // namespace pyframes
