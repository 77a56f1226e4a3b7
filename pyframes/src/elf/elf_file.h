// One ELF file opened with libelf: symbols (.dynsym first, then .symtab), sections and PT_LOAD
// segments. An ElfFile belongs to one reader at a time: libelf's per-file state is not safe to
// share between threads, so nothing here is cached globally; reading several targets in
// parallel means each opens its own files.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pyframes/result.h"

typedef struct Elf Elf;  // libelf's handle, kept out of this header

namespace pyframes {

struct ElfSymbol {
  uint64_t value = 0;  // st_value: a link-time virtual address
  uint64_t size = 0;
  bool global = false;  // STB_GLOBAL or STB_WEAK (a LOCAL symbol lives in .symtab only)
  bool from_dynsym = false;
};

// A function symbol, for turning addresses into names (native frames).
struct ElfFunction {
  uint64_t value = 0;      // st_value: a link-time virtual address
  uint64_t size = 0;       // 0 for symbols without a size (hand-written assembly)
  std::string_view name;   // points into the file's string table: valid while the ElfFile lives
  bool global = false;     // STB_GLOBAL
  bool weak = false;       // STB_WEAK
};

struct ElfSection {
  std::string name;
  uint64_t address = 0;  // sh_addr
  uint64_t size = 0;
  uint64_t file_offset = 0;
  bool has_file_bytes = false;  // false for SHT_NOBITS (.bss)
  bool writable = false;
};

struct ElfSegment {  // a PT_LOAD program header
  uint64_t vaddr = 0;
  uint64_t memsz = 0;
  uint64_t offset = 0;
  uint64_t filesz = 0;
  bool writable = false;
  bool executable = false;
};

class ElfFile {
 public:
  // Opens `path` read-only. The error names the file and the reason.
  static Result<std::unique_ptr<ElfFile>> open(const std::string& path);
  ~ElfFile();
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;

  const std::string& path() const { return path_; }
  bool is_shared_object() const { return shared_; }  // ET_DYN: needs a load bias
  bool has_symtab() const { return has_symtab_; }

  // Looks `name` up in .dynsym, then in .symtab. Undefined symbols are never returned.
  std::optional<ElfSymbol> find_symbol(std::string_view name, bool dynsym_only = false) const;
  // Looks several names up in one pass over one table (.dynsym when `dynamic`, else .symtab),
  // filling only the entries of `found` that are still empty.
  void find_symbols(std::span<const std::string_view> names, std::span<std::optional<ElfSymbol>> found,
                    bool dynamic) const;

  // Every defined function symbol (STT_FUNC, STT_GNU_IFUNC) of .dynsym (`dynamic`) or .symtab,
  // in table order.
  std::vector<ElfFunction> function_symbols(bool dynamic) const;

  const std::vector<ElfSection>& sections() const { return sections_; }
  const ElfSection* section(std::string_view name) const;
  const std::vector<ElfSegment>& segments() const { return segments_; }
  // The unwind tables' index, .eh_frame_hdr (PT_GNU_EH_FRAME, else the section), as a
  // link-time address; nullopt when the file has none.
  std::optional<uint64_t> eh_frame_hdr() const { return eh_frame_hdr_; }

  // The file's bytes at a link-time virtual address (initialized data only: .rodata, .data).
  // Returns the number of bytes available there (0 when the address has no file bytes).
  std::string_view bytes_at(uint64_t vaddr, size_t size) const;
  // The whole contents of a section that has file bytes; empty when absent.
  std::string_view section_bytes(std::string_view name) const;

 private:
  ElfFile() = default;
  std::optional<ElfSymbol> find_in(int section_type, std::string_view name) const;
  void find_many(int section_type, std::span<const std::string_view> names,
                 std::span<std::optional<ElfSymbol>> found) const;

  std::string path_;
  int fd_ = -1;
  Elf* elf_ = nullptr;
  const char* raw_ = nullptr;  // the mapped file
  size_t raw_size_ = 0;
  bool shared_ = false;
  bool has_symtab_ = false;
  std::vector<ElfSection> sections_;
  std::vector<ElfSegment> segments_;
  std::optional<uint64_t> eh_frame_hdr_;
};

}  // namespace pyframes
