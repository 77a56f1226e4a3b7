// Helpers for the core-file unit tests: a temporary directory, and a builder for small
// synthetic ELF cores whose every byte the test controls (segments, notes, truncation).
#pragma once

#include <elf.h>
#include <ftw.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace core_test {

using Bytes = std::vector<unsigned char>;

class TempDir {
 public:
  TempDir() {
    char templ[] = "/tmp/pyframes-core-test-XXXXXX";
    path_ = ::mkdtemp(templ) ? templ : "";
  }
  ~TempDir() {
    if (!path_.empty()) {
      ::nftw(
          path_.c_str(), [](const char* p, const struct stat*, int, struct FTW*) { return ::remove(p); }, 16,
          FTW_DEPTH | FTW_PHYS);
    }
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline void write_file(const std::string& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

template <class T>
void put(Bytes& bytes, size_t offset, T value) {
  if (bytes.size() < offset + sizeof(T)) bytes.resize(offset + sizeof(T));
  std::memcpy(bytes.data() + offset, &value, sizeof(T));
}

template <class T>
void append(Bytes& bytes, T value) {
  put(bytes, bytes.size(), value);
}

inline Bytes pattern(size_t size, unsigned seed) {
  Bytes out(size);
  for (size_t i = 0; i < size; ++i) out[i] = static_cast<unsigned char>((i * 131 + seed * 7 + i / 251) & 0xff);
  return out;
}

// An ELF header whose program headers follow it directly; the synthetic files below all start so.
inline Elf64_Ehdr elf_header(unsigned char elf_class, unsigned char data, uint16_t type, uint16_t machine,
                             uint16_t phnum) {
  Elf64_Ehdr ehdr{};
  std::memcpy(ehdr.e_ident, ELFMAG, SELFMAG);
  ehdr.e_ident[EI_CLASS] = elf_class;
  ehdr.e_ident[EI_DATA] = data;
  ehdr.e_ident[EI_VERSION] = EV_CURRENT;
  ehdr.e_type = type;
  ehdr.e_machine = machine;
  ehdr.e_version = EV_CURRENT;
  ehdr.e_phoff = sizeof(Elf64_Ehdr);
  ehdr.e_ehsize = sizeof(Elf64_Ehdr);
  ehdr.e_phentsize = sizeof(Elf64_Phdr);
  ehdr.e_phnum = phnum;
  return ehdr;
}

struct SyntheticNote {
  std::string name;
  uint32_t type;
  Bytes desc;
};

struct SyntheticSegment {
  uint64_t vaddr;
  uint64_t memsz;
  Bytes bytes;  // filesz = bytes.size()
  uint32_t flags = PF_R | PF_W;
};

struct SyntheticCore {
  unsigned char elf_class = ELFCLASS64;
  unsigned char data = ELFDATA2LSB;
  uint16_t type = ET_CORE;
  uint16_t machine = EM_X86_64;
  std::vector<SyntheticNote> notes;
  std::vector<SyntheticSegment> segments;

  // ELF header, program headers (notes first), the note segment, then each segment's bytes.
  Bytes build() const {
    Bytes note_bytes;
    for (const auto& note : notes) {
      append<uint32_t>(note_bytes, static_cast<uint32_t>(note.name.size() + 1));
      append<uint32_t>(note_bytes, static_cast<uint32_t>(note.desc.size()));
      append<uint32_t>(note_bytes, note.type);
      Bytes name(note.name.begin(), note.name.end());
      name.resize((note.name.size() + 1 + 3) & ~size_t{3}, 0);
      note_bytes.insert(note_bytes.end(), name.begin(), name.end());
      Bytes desc = note.desc;
      desc.resize((desc.size() + 3) & ~size_t{3}, 0);
      note_bytes.insert(note_bytes.end(), desc.begin(), desc.end());
    }
    size_t phnum = 1 + segments.size();
    size_t offset = sizeof(Elf64_Ehdr) + phnum * sizeof(Elf64_Phdr);
    Bytes out(offset, 0);
    const Elf64_Ehdr ehdr = elf_header(elf_class, data, type, machine, static_cast<uint16_t>(phnum));
    std::memcpy(out.data(), &ehdr, sizeof ehdr);

    std::vector<Elf64_Phdr> phdrs;
    Elf64_Phdr note_phdr{};
    note_phdr.p_type = PT_NOTE;
    note_phdr.p_offset = offset;
    note_phdr.p_filesz = note_bytes.size();
    note_phdr.p_align = 4;
    phdrs.push_back(note_phdr);
    out.insert(out.end(), note_bytes.begin(), note_bytes.end());
    for (const auto& segment : segments) {
      Elf64_Phdr phdr{};
      phdr.p_type = PT_LOAD;
      phdr.p_flags = segment.flags;
      phdr.p_offset = out.size();
      phdr.p_vaddr = segment.vaddr;
      phdr.p_filesz = segment.bytes.size();
      phdr.p_memsz = segment.memsz;
      phdr.p_align = 1;
      phdrs.push_back(phdr);
      out.insert(out.end(), segment.bytes.begin(), segment.bytes.end());
    }
    std::memcpy(out.data() + sizeof(Elf64_Ehdr), phdrs.data(), phdrs.size() * sizeof(Elf64_Phdr));
    return out;
  }
};

// struct elf_prstatus, x86-64: 336 bytes, registers at 112.
inline Bytes prstatus(int32_t tid, int16_t cursig, uint64_t rip, uint64_t rsp, uint64_t fs_base) {
  Bytes desc(336, 0);
  put<int16_t>(desc, 12, cursig);
  put<int32_t>(desc, 32, tid);
  put<uint64_t>(desc, 112 + 16 * 8, rip);
  put<uint64_t>(desc, 112 + 19 * 8, rsp);
  put<uint64_t>(desc, 112 + 21 * 8, fs_base);
  return desc;
}

// struct elf_prpsinfo: 136 bytes.
inline Bytes prpsinfo(int32_t pid, int32_t ppid, const std::string& fname, const std::string& psargs) {
  Bytes desc(136, 0);
  put<int32_t>(desc, 24, pid);
  put<int32_t>(desc, 28, ppid);
  std::memcpy(desc.data() + 40, fname.data(), std::min<size_t>(fname.size(), 15));
  std::memcpy(desc.data() + 56, psargs.data(), std::min<size_t>(psargs.size(), 79));
  return desc;
}

inline Bytes siginfo(int32_t signo, int32_t code, uint64_t union_word) {
  Bytes desc(128, 0);
  put<int32_t>(desc, 0, signo);
  put<int32_t>(desc, 8, code);
  put<uint64_t>(desc, 16, union_word);
  return desc;
}

struct FileEntry {
  uint64_t start, end, offset_pages;
  std::string path;
};

inline Bytes nt_file(uint64_t page_size, const std::vector<FileEntry>& entries) {
  Bytes desc;
  append<uint64_t>(desc, entries.size());
  append<uint64_t>(desc, page_size);
  for (const auto& e : entries) {
    append<uint64_t>(desc, e.start);
    append<uint64_t>(desc, e.end);
    append<uint64_t>(desc, e.offset_pages);
  }
  for (const auto& e : entries) {
    desc.insert(desc.end(), e.path.begin(), e.path.end());
    desc.push_back(0);
  }
  return desc;
}

inline Bytes auxv(const std::vector<std::pair<uint64_t, uint64_t>>& entries) {
  Bytes desc;
  for (const auto& [type, value] : entries) {
    append<uint64_t>(desc, type);
    append<uint64_t>(desc, value);
  }
  append<uint64_t>(desc, AT_NULL);
  append<uint64_t>(desc, 0);
  return desc;
}

constexpr uint32_t kNtFile = 0x46494c45;
constexpr uint32_t kNtSiginfo = 0x53494749;

// A minimal ELF file (header, one PT_NOTE program header, a GNU build-id note) padded to `size`
// with a recognizable pattern: stands in for a library a core maps.
inline Bytes elf_with_build_id(const Bytes& build_id, size_t size, unsigned seed) {
  Bytes out = pattern(size, seed);
  const Elf64_Ehdr ehdr = elf_header(ELFCLASS64, ELFDATA2LSB, ET_DYN, EM_X86_64, 1);
  std::memcpy(out.data(), &ehdr, sizeof ehdr);
  size_t note_at = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr);
  Bytes note;
  append<uint32_t>(note, 4);
  append<uint32_t>(note, static_cast<uint32_t>(build_id.size()));
  append<uint32_t>(note, NT_GNU_BUILD_ID);
  note.insert(note.end(), {'G', 'N', 'U', 0});
  note.insert(note.end(), build_id.begin(), build_id.end());
  Elf64_Phdr phdr{};
  phdr.p_type = PT_NOTE;
  phdr.p_offset = note_at;
  phdr.p_vaddr = note_at;
  phdr.p_filesz = note.size();
  phdr.p_memsz = note.size();
  phdr.p_align = 4;
  std::memcpy(out.data() + sizeof(Elf64_Ehdr), &phdr, sizeof phdr);
  std::memcpy(out.data() + note_at, note.data(), note.size());
  return out;
}

}  // namespace core_test
