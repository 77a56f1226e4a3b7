// The ELF reader on hostile files: what locate_python asks of a module (runtime symbols from
// .dynsym and .symtab, sections, initialized bytes at symbol addresses, the load bias from
// mappings like the kernel would make for its PT_LOAD segments), and what naming a stripped
// module's native frames reads (unwind ranges from .eh_frame_hdr, split-off parts).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "elf/elf_file.h"
#include "elf/loaded_module.h"
#include "fuzz_support.h"
#include "native/split_parts.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::InputFile input(data, size);
  if (!input.ok()) return 0;
  auto elf = pyframes::ElfFile::open(input.path());
  if (!elf) return 0;
  const pyframes::ElfFile& file = **elf;

  constexpr std::string_view kNames[] = {"_PyRuntime", "Py_Version", "interp_head", "_PyThreadState_Current"};
  std::optional<pyframes::ElfSymbol> found[4];
  file.find_symbols(kNames, found, true);
  file.find_symbols(kNames, found, false);
  for (const auto& symbol : found) {
    if (symbol) (void)file.bytes_at(symbol->value, 64);
  }
  (void)file.find_symbol("PY_VERSION_HEX");
  (void)file.find_symbol("_PyRuntime", true);
  for (const auto& section : file.sections()) {
    (void)file.section_bytes(section.name);
    (void)file.bytes_at(section.address, 16);
  }
  (void)file.section(".PyRuntime");

  // Mappings the way the loader makes them (page-aligned, at a bias), then the bias back.
  std::vector<pyframes::Mapping> mappings;
  const uint64_t bias = file.is_shared_object() ? 0x7f0000000000ull : 0;
  for (const auto& segment : file.segments()) {
    pyframes::Mapping m;
    m.start = (segment.vaddr + bias) & ~uint64_t{4095};
    m.end = m.start + ((segment.memsz + 4095) & ~uint64_t{4095});
    m.file_offset = segment.offset & ~uint64_t{4095};
    m.readable = true;
    m.writable = segment.writable;
    m.executable = segment.executable;
    m.path = input.path();
    mappings.push_back(m);
  }
  (void)pyframes::compute_load_bias(file, mappings);

  size_t functions = 0;
  for (const auto& function : file.function_symbols(true)) {
    if (++functions > 64) break;
    (void)pyframes::native::unwind_range_at(file, function.value);
    (void)pyframes::native::split_parts_of(file, function.value, function.size);
  }
  return 0;
}
