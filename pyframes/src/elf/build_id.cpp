#include "elf/build_id.h"

#include <elf.h>
#include <fmt/format.h>
#include <gelf.h>
#include <libelf.h>

#include <cstring>
#include <vector>

namespace pyframes::core {

namespace {

constexpr size_t kMaxPhnum = 256;  // real ELF files have a dozen; bounds a damaged header
constexpr uint64_t kMaxNoteSize = 1 << 16;

// Walks a buffer of ELF notes for NT_GNU_BUILD_ID from "GNU".
std::optional<std::string> find_build_id(const unsigned char* notes, size_t size) {
  size_t offset = 0;
  while (offset + sizeof(Elf64_Nhdr) <= size) {
    Elf64_Nhdr nhdr;
    std::memcpy(&nhdr, notes + offset, sizeof nhdr);
    size_t name_at = offset + sizeof nhdr;
    size_t desc_at = name_at + ((nhdr.n_namesz + 3u) & ~size_t{3});
    size_t next = desc_at + ((nhdr.n_descsz + 3u) & ~size_t{3});
    if (desc_at > size || nhdr.n_descsz > size - desc_at) return std::nullopt;
    if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 && std::memcmp(notes + name_at, "GNU", 4) == 0 &&
        nhdr.n_descsz > 0) {
      return std::string(reinterpret_cast<const char*>(notes + desc_at), nhdr.n_descsz);
    }
    offset = next;
  }
  return std::nullopt;
}

}  // namespace

std::string hex(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) out += fmt::format("{:02x}", c);
  return out;
}

std::optional<std::string> build_id_of_image(const ImageReader& read) {
  Elf64_Ehdr ehdr;
  if (!read(0, &ehdr, sizeof ehdr) || std::memcmp(ehdr.e_ident, ELFMAG, SELFMAG) != 0 ||
      ehdr.e_ident[EI_CLASS] != ELFCLASS64 || ehdr.e_phentsize != sizeof(Elf64_Phdr) || ehdr.e_phnum > kMaxPhnum) {
    return std::nullopt;
  }
  std::vector<Elf64_Phdr> phdrs(ehdr.e_phnum);
  if (!read(ehdr.e_phoff, phdrs.data(), phdrs.size() * sizeof(Elf64_Phdr))) return std::nullopt;
  for (const auto& phdr : phdrs) {
    if (phdr.p_type != PT_NOTE || phdr.p_filesz == 0 || phdr.p_filesz > kMaxNoteSize) continue;
    // The first mapping starts at file offset 0, so a note's file offset is its offset there.
    std::vector<unsigned char> notes(phdr.p_filesz);
    if (!read(phdr.p_offset, notes.data(), notes.size())) continue;
    if (auto id = find_build_id(notes.data(), notes.size())) return id;
  }
  return std::nullopt;
}

std::optional<std::string> build_id_of_file(int fd) {
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  if (elf == nullptr) return std::nullopt;
  std::optional<std::string> result;
  size_t phnum = 0;
  if (elf_kind(elf) == ELF_K_ELF && elf_getphdrnum(elf, &phnum) == 0) {
    for (size_t i = 0; i < phnum && !result; ++i) {
      GElf_Phdr phdr;
      if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr || phdr.p_type != PT_NOTE) continue;
      if (phdr.p_filesz == 0 || phdr.p_filesz > kMaxNoteSize) continue;
      Elf_Data* data = elf_getdata_rawchunk(elf, static_cast<int64_t>(phdr.p_offset), phdr.p_filesz, ELF_T_NHDR);
      if (data != nullptr) result = find_build_id(static_cast<const unsigned char*>(data->d_buf), data->d_size);
    }
    for (Elf_Scn* scn = nullptr; !result && (scn = elf_nextscn(elf, scn)) != nullptr;) {
      GElf_Shdr shdr;
      if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_NOTE) continue;
      Elf_Data* data = elf_rawdata(scn, nullptr);
      if (data != nullptr && data->d_buf != nullptr) {
        result = find_build_id(static_cast<const unsigned char*>(data->d_buf), data->d_size);
      }
    }
  }
  elf_end(elf);
  return result;
}

}  // namespace pyframes::core
