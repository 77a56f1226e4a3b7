#include "elf/elf_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <mutex>

namespace pyframes {

namespace {

void init_libelf() {
  // elf_version must run once per process before any other libelf call.
  static std::once_flag once;
  std::call_once(once, [] { elf_version(EV_CURRENT); });
}

}  // namespace

Result<std::unique_ptr<ElfFile>> ElfFile::open(const std::string& path) {
  init_libelf();
  std::unique_ptr<ElfFile> file(new ElfFile());
  file->path_ = path;
  // O_NONBLOCK: a path that names a FIFO (a file replaced after it was mapped, a path in a
  // --merge-json document) must not block the open; only regular files are read.
  file->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (file->fd_ < 0) {
    int error = errno;
    ErrorKind kind = error == ENOENT ? ErrorKind::NotFound
                     : (error == EACCES || error == EPERM) ? ErrorKind::PermissionDenied
                                                            : ErrorKind::Io;
    return make_error(kind, fmt::format("cannot open {}: {}", path, std::strerror(error)));
  }
  struct stat status {};
  if (::fstat(file->fd_, &status) != 0 || !S_ISREG(status.st_mode)) {
    return make_error(ErrorKind::Corrupt, fmt::format("{} is not a regular file", path));
  }
  file->elf_ = elf_begin(file->fd_, ELF_C_READ_MMAP, nullptr);
  if (file->elf_ == nullptr || elf_kind(file->elf_) != ELF_K_ELF) {
    return make_error(ErrorKind::Corrupt, fmt::format("{} is not an ELF file ({})", path, elf_errmsg(-1)));
  }
  if (gelf_getclass(file->elf_) != ELFCLASS64) {
    return make_error(ErrorKind::Corrupt, fmt::format("{} is not a 64-bit ELF file", path));
  }
  GElf_Ehdr ehdr;
  if (gelf_getehdr(file->elf_, &ehdr) == nullptr) {
    return make_error(ErrorKind::Corrupt, fmt::format("{}: bad ELF header ({})", path, elf_errmsg(-1)));
  }
  file->shared_ = ehdr.e_type == ET_DYN;
  file->raw_ = elf_rawfile(file->elf_, &file->raw_size_);

  size_t phnum = 0;
  if (elf_getphdrnum(file->elf_, &phnum) == 0) {
    for (size_t i = 0; i < phnum; ++i) {
      GElf_Phdr phdr;
      if (gelf_getphdr(file->elf_, static_cast<int>(i), &phdr) == nullptr) continue;
      if (phdr.p_type == PT_GNU_EH_FRAME) file->eh_frame_hdr_ = phdr.p_vaddr;
      if (phdr.p_type != PT_LOAD) continue;
      file->segments_.push_back({phdr.p_vaddr, phdr.p_memsz, phdr.p_offset, phdr.p_filesz, (phdr.p_flags & PF_W) != 0,
                                 (phdr.p_flags & PF_X) != 0});
    }
  }

  size_t shstrndx = 0;
  if (elf_getshdrstrndx(file->elf_, &shstrndx) == 0) {
    for (Elf_Scn* scn = elf_nextscn(file->elf_, nullptr); scn != nullptr; scn = elf_nextscn(file->elf_, scn)) {
      GElf_Shdr shdr;
      if (gelf_getshdr(scn, &shdr) == nullptr) continue;
      if (shdr.sh_type == SHT_SYMTAB) file->has_symtab_ = true;
      const char* name = elf_strptr(file->elf_, shstrndx, shdr.sh_name);
      ElfSection section;
      section.name = name != nullptr ? name : "";
      section.address = shdr.sh_addr;
      section.size = shdr.sh_size;
      section.file_offset = shdr.sh_offset;
      section.has_file_bytes = shdr.sh_type != SHT_NOBITS;
      section.writable = (shdr.sh_flags & SHF_WRITE) != 0;
      file->sections_.push_back(std::move(section));
    }
  }
  if (!file->eh_frame_hdr_) {
    if (const ElfSection* hdr = file->section(".eh_frame_hdr"); hdr != nullptr && hdr->address != 0) {
      file->eh_frame_hdr_ = hdr->address;
    }
  }
  return file;
}

ElfFile::~ElfFile() {
  if (elf_ != nullptr) elf_end(elf_);
  if (fd_ >= 0) ::close(fd_);
}

namespace {

// Calls visit(sym, name, max_length) for each defined, named symbol of every table of
// `section_type` (SHT_DYNSYM, SHT_SYMTAB), in table order, until it returns false. `name`
// points into the string table, which may lack a final NUL: at most `max_length` bytes are its.
template <class Visit>
void for_each_symbol(Elf* elf, int section_type, Visit&& visit) {
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || static_cast<int>(shdr.sh_type) != section_type) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    // The string table, read directly: elf_strptr per symbol costs more than the compare.
    Elf_Data* strings = elf_getdata(elf_getscn(elf, shdr.sh_link), nullptr);
    // A string table without bytes (SHT_NOBITS, or a size with no data in a damaged file) has
    // no names to match.
    if (data == nullptr || strings == nullptr || strings->d_buf == nullptr || shdr.sh_entsize == 0) continue;
    const char* string_base = static_cast<const char*>(strings->d_buf);
    const size_t string_size = strings->d_size;
    const size_t count = shdr.sh_size / shdr.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) break;
      if (sym.st_shndx == SHN_UNDEF || sym.st_name == 0 || sym.st_name >= string_size) continue;
      if (!visit(sym, string_base + sym.st_name, string_size - sym.st_name)) return;
    }
  }
}

}  // namespace

void ElfFile::find_many(int section_type, std::span<const std::string_view> names,
                        std::span<std::optional<ElfSymbol>> found) const {
  size_t missing = 0;
  for (size_t i = 0; i < names.size(); ++i) missing += found[i] ? 0 : 1;
  if (missing == 0) return;
  for_each_symbol(elf_, section_type, [&](const GElf_Sym& sym, const char* sym_name, size_t max_length) {
    for (size_t n = 0; n < names.size(); ++n) {
      if (found[n] || names[n].size() >= max_length || std::memcmp(sym_name, names[n].data(), names[n].size()) != 0 ||
          sym_name[names[n].size()] != '\0') {
        continue;
      }
      int bind = GELF_ST_BIND(sym.st_info);
      found[n] = ElfSymbol{sym.st_value, sym.st_size, bind == STB_GLOBAL || bind == STB_WEAK, section_type == SHT_DYNSYM};
      --missing;
    }
    return missing > 0;
  });
}

std::vector<ElfFunction> ElfFile::function_symbols(bool dynamic) const {
  std::vector<ElfFunction> out;
  for_each_symbol(elf_, dynamic ? SHT_DYNSYM : SHT_SYMTAB, [&](const GElf_Sym& sym, const char* name, size_t max_length) {
    const int type = GELF_ST_TYPE(sym.st_info);
    if ((type == STT_FUNC || type == STT_GNU_IFUNC) && sym.st_value != 0) {
      const int bind = GELF_ST_BIND(sym.st_info);
      out.push_back(ElfFunction{sym.st_value, sym.st_size, std::string_view(name, strnlen(name, max_length)),
                                bind == STB_GLOBAL, bind == STB_WEAK});
    }
    return true;
  });
  return out;
}

std::optional<ElfSymbol> ElfFile::find_in(int section_type, std::string_view name) const {
  std::optional<ElfSymbol> found;
  find_many(section_type, std::span<const std::string_view>(&name, 1), std::span<std::optional<ElfSymbol>>(&found, 1));
  return found;
}

void ElfFile::find_symbols(std::span<const std::string_view> names, std::span<std::optional<ElfSymbol>> found,
                           bool dynamic) const {
  find_many(dynamic ? SHT_DYNSYM : SHT_SYMTAB, names, found);
}

std::optional<ElfSymbol> ElfFile::find_symbol(std::string_view name, bool dynsym_only) const {
  if (auto sym = find_in(SHT_DYNSYM, name)) return sym;
  if (dynsym_only) return std::nullopt;
  return find_in(SHT_SYMTAB, name);
}

const ElfSection* ElfFile::section(std::string_view name) const {
  for (const auto& s : sections_) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::string_view ElfFile::bytes_at(uint64_t vaddr, size_t size) const {
  if (raw_ == nullptr) return {};
  for (const auto& seg : segments_) {
    if (vaddr < seg.vaddr || vaddr >= seg.vaddr + seg.filesz) continue;
    uint64_t offset = seg.offset + (vaddr - seg.vaddr);
    uint64_t available = seg.vaddr + seg.filesz - vaddr;
    if (offset >= raw_size_) return {};
    available = std::min<uint64_t>({available, raw_size_ - offset, size});
    return {raw_ + offset, static_cast<size_t>(available)};
  }
  return {};
}

std::string_view ElfFile::section_bytes(std::string_view name) const {
  const ElfSection* s = section(name);
  if (s == nullptr || !s->has_file_bytes || raw_ == nullptr || s->file_offset >= raw_size_) return {};
  return {raw_ + s->file_offset, static_cast<size_t>(std::min<uint64_t>(s->size, raw_size_ - s->file_offset))};
}

}  // namespace pyframes
