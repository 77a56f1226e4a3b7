// The ELF files of a target's modules, opened once per dump and shared by the native unwinder
// (unwind tables) and the symbolizer (function names). Files are found through the same
// resolver as the rest of the engine: /proc/PID/root for live processes, the core's verified
// copies (--exe, --lib-search, --root) for cores.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>

#include "elf/loaded_module.h"
#include "pyframes/module_map.h"

namespace pyframes::native {

class ModuleCache {
 public:
  ModuleCache(const ModuleMap& modules, FileResolver resolve);

  const ModuleMap& modules() const { return modules_; }
  // The module whose file the target mapped at `target_path`; nullptr when that file cannot be
  // opened here or does not match the mappings (remembered: asked once per dump).
  const LoadedModule* module(const std::string& target_path);
  // The module mapped at `address`, nullptr for anonymous memory, [vdso] and unusable files.
  const LoadedModule* module_at(uint64_t address);

 private:
  const ModuleMap& modules_;
  FileResolver resolve_;
  std::unordered_map<std::string, std::unique_ptr<LoadedModule>> opened_;
};

// True for mappings that name a file ("/usr/lib/libc.so.6"), false for anonymous memory and
// the kernel's pseudo names ("[stack]", "[vdso]").
bool is_file_mapping(const Mapping& mapping);

}  // namespace pyframes::native
