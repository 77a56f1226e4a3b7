#include "core/core_file.h"

#include <elf.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/gzip_inflate.h"

namespace pyframes::core {

bool pread_exact(int fd, void* out, size_t size, uint64_t offset) noexcept {
  auto* cursor = static_cast<unsigned char*>(out);
  while (size > 0) {
    ssize_t n = ::pread(fd, cursor, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    cursor += n;
    size -= static_cast<size_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

namespace {

constexpr uint64_t kMaxNoteBytes = 64ull << 20;  // far above any real core's notes; bounds a hostile header
constexpr size_t kMaxSegments = 1u << 22;        // 64 times vm.max_map_count's default

const char* machine_name(unsigned machine) {
  switch (machine) {
    case EM_386: return "i386";
    case EM_X86_64: return "x86-64";
    case EM_ARM: return "32-bit ARM";
    case EM_AARCH64: return "AArch64";
    case EM_PPC: return "PowerPC";
    case EM_PPC64: return "PowerPC64";
    case EM_S390: return "s390";
    case EM_RISCV: return "RISC-V";
    case EM_MIPS: return "MIPS";
    case EM_SPARCV9: return "SPARC64";
    default: return nullptr;
  }
}

const char* elf_type_name(unsigned type) {
  switch (type) {
    case ET_EXEC: return "an executable";
    case ET_DYN: return "a shared object or PIE executable";
    case ET_REL: return "an object file";
    default: return "an ELF file of an unknown type";
  }
}

// Other compressions seen on clusters (systemd-coredump writes .zst, some archives use xz).
const char* compression_name(const unsigned char* magic, size_t size) {
  if (size >= 4 && magic[0] == 0x28 && magic[1] == 0xb5 && magic[2] == 0x2f && magic[3] == 0xfd) return "zstd";
  if (size >= 6 && std::memcmp(magic,
                               "\xfd"
                               "7zXZ\0",
                               6) == 0)
    return "xz";
  if (size >= 3 && std::memcmp(magic, "BZh", 3) == 0) return "bzip2";
  if (size >= 4 && magic[0] == 0x04 && magic[1] == 0x22 && magic[2] == 0x4d && magic[3] == 0x18) return "lz4";
  return nullptr;
}

std::string decompress_hint(const char* format, const std::string& path) {
  if (std::strcmp(format, "zstd") == 0) return fmt::format("decompress it first: zstd -d {}", path);
  if (std::strcmp(format, "xz") == 0) return fmt::format("decompress it first: xz -dk {}", path);
  if (std::strcmp(format, "bzip2") == 0) return fmt::format("decompress it first: bzip2 -dk {}", path);
  return fmt::format("decompress it first: lz4 -d {}", path);
}

Result<UniqueFd> open_regular_file(const std::string& path, uint64_t* size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) return make_error(ErrorKind::NotFound, fmt::format("core file {} does not exist", path));
    if (err == EACCES) {
      return make_error(ErrorKind::PermissionDenied, fmt::format("cannot open core file {}: permission denied", path),
                        "kernel cores are written mode 0600: read it as its owner or root");
    }
    return make_error(ErrorKind::Io, fmt::format("cannot open core file {}: {}", path, std::strerror(err)));
  }
  UniqueFd owned(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    return make_error(ErrorKind::Io, fmt::format("cannot stat {}: {}", path, std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) {
    return make_error(ErrorKind::Usage, fmt::format("{} is not a regular file", path), "pass the path of a core file");
  }
  *size = static_cast<uint64_t>(st.st_size);
  return owned;
}

// Validation that needs only e_ident, so that foreign cores get a precise message before libelf.
Result<void> check_ident(const std::string& path, const unsigned char* ident, uint64_t size) {
  if (size < EI_NIDENT || std::memcmp(ident, ELFMAG, SELFMAG) != 0) {
    return make_error(ErrorKind::Corrupt, fmt::format("{} is not an ELF file (no ELF magic at its start)", path),
                      "pass a core file written by gcore or by the kernel, or a process id");
  }
  if (ident[EI_CLASS] != ELFCLASS64) {
    return make_error(ErrorKind::Corrupt,
                      fmt::format("{} is a 32-bit ELF file; pyframes reads 64-bit cores only", path),
                      "read it with the tools of the machine that wrote it");
  }
  if (ident[EI_DATA] != ELFDATA2LSB) {
    return make_error(ErrorKind::Corrupt,
                      fmt::format("{} is a big-endian ELF file; pyframes reads little-endian cores only", path),
                      "read it with the tools of the machine that wrote it");
  }
  if (size < sizeof(Elf64_Ehdr)) {
    return make_error(ErrorKind::Truncated,
                      fmt::format("{} is cut inside its ELF header ({} of {} bytes)", path, size, sizeof(Elf64_Ehdr)),
                      "the dump was cut short, e.g. by a full disk or ulimit -c; dump again");
  }
  return {};
}

struct ElfHandle {
  Elf* elf = nullptr;
  ~ElfHandle() {
    if (elf) elf_end(elf);
  }
};

// Appends the notes of one PT_NOTE segment (already checked to lie inside the file).
Result<void> read_notes(Elf* elf, const GElf_Phdr& phdr, const std::string& path, std::vector<Note>& out) {
  if (phdr.p_filesz > kMaxNoteBytes) {
    return make_error(ErrorKind::Corrupt,
                      fmt::format("{}: note segment of {} bytes is implausibly large", path, phdr.p_filesz));
  }
  Elf_Data* data = elf_getdata_rawchunk(elf, static_cast<int64_t>(phdr.p_offset), phdr.p_filesz, ELF_T_NHDR);
  if (data == nullptr) {
    return make_error(ErrorKind::Corrupt,
                      fmt::format("{}: notes at offset {:#x} are unreadable: {}", path, phdr.p_offset, elf_errmsg(-1)));
  }
  const auto* bytes = static_cast<const unsigned char*>(data->d_buf);
  GElf_Nhdr nhdr;
  size_t name_offset = 0, desc_offset = 0;
  for (size_t offset = 0; (offset = gelf_getnote(data, offset, &nhdr, &name_offset, &desc_offset)) > 0;) {
    Note note;
    note.type = nhdr.n_type;
    const char* name = reinterpret_cast<const char*>(bytes + name_offset);
    note.name.assign(name, nhdr.n_namesz > 0 ? strnlen(name, nhdr.n_namesz) : 0);
    note.desc.assign(bytes + desc_offset, bytes + desc_offset + nhdr.n_descsz);
    out.push_back(std::move(note));
  }
  return {};
}

}  // namespace

const Segment* CoreFile::find_segment(uint64_t address) const {
  auto it = std::upper_bound(segments_.begin(), segments_.end(), address,
                             [](uint64_t a, const Segment& s) { return a < s.vaddr; });
  if (it == segments_.begin()) return nullptr;
  --it;
  return it->contains(address) ? &*it : nullptr;
}

ReadStatus CoreFile::read_file_bytes(uint64_t offset, void* out, size_t size) const noexcept {
  if (offset > size_ || size > size_ - offset) return ReadStatus::Unmapped;
  return pread_exact(fd_.get(), out, size, offset) ? ReadStatus::Ok : ReadStatus::IoError;
}

Result<CoreFile> parse_core(CoreFile file);

Result<CoreFile> CoreFile::open(const std::string& path) {
  CoreFile file;
  file.path_ = path;
  PYFRAMES_TRY(fd, open_regular_file(path, &file.size_));
  file.fd_ = std::move(fd);
  if (file.size_ == 0) {
    return make_error(
        ErrorKind::Truncated, fmt::format("core file {} is empty", path),
        "the dump was not written: check `ulimit -c` and /proc/sys/kernel/core_pattern, or use gcore PID");
  }

  unsigned char magic[EI_NIDENT] = {};
  size_t magic_size = static_cast<size_t>(std::min<uint64_t>(file.size_, sizeof magic));
  if (!pread_exact(file.fd_.get(), magic, magic_size, 0)) {
    return make_error(ErrorKind::Io, fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  }
  if (magic_size >= 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
    PYFRAMES_TRY(inflated, inflate_to_temp_file(file.fd_.get(), path));
    file.fd_ = std::move(inflated.fd);
    file.size_ = inflated.size;
    file.gzip_ = true;
    if (!inflated.warning.empty()) file.warnings_.push_back(inflated.warning);
    magic_size = static_cast<size_t>(std::min<uint64_t>(file.size_, sizeof magic));
    if (!pread_exact(file.fd_.get(), magic, magic_size, 0)) {
      return make_error(ErrorKind::Io, fmt::format("cannot read the decompressed {}: {}", path, std::strerror(errno)));
    }
  } else if (const char* format = compression_name(magic, magic_size)) {
    return make_error(ErrorKind::Usage,
                      fmt::format("{} is {}-compressed; pyframes reads plain and gzip cores", path, format),
                      decompress_hint(format, path));
  }
  PYFRAMES_CHECK(check_ident(path, magic, file.size_));
  return parse_core(std::move(file));
}

Result<CoreFile> parse_core(CoreFile file) {
  const std::string& path = file.path_;
  elf_version(EV_CURRENT);
  ElfHandle handle;
  handle.elf = elf_begin(file.fd_.get(), ELF_C_READ, nullptr);  // reads headers on demand, not the file
  if (handle.elf == nullptr || elf_kind(handle.elf) != ELF_K_ELF) {
    return make_error(ErrorKind::Corrupt, fmt::format("{}: libelf cannot read it: {}", path, elf_errmsg(-1)));
  }
  GElf_Ehdr ehdr;
  if (gelf_getehdr(handle.elf, &ehdr) == nullptr) {
    return make_error(ErrorKind::Corrupt, fmt::format("{}: bad ELF header: {}", path, elf_errmsg(-1)));
  }
  if (ehdr.e_type != ET_CORE) {
    return make_error(ErrorKind::Usage, fmt::format("{} is {}, not a core file", path, elf_type_name(ehdr.e_type)),
                      "pass a core file from gcore or a kernel dump, or the PID of a running process");
  }
  if (ehdr.e_machine != EM_X86_64 && ehdr.e_machine != EM_AARCH64) {
    const char* name = machine_name(ehdr.e_machine);
    return make_error(
        ErrorKind::Corrupt,
        name ? fmt::format("{} is a core of a {} process; pyframes reads x86-64 and AArch64 cores", path, name)
             : fmt::format("{} is a core of an unknown machine (e_machine {}); pyframes reads x86-64 and AArch64 cores",
                           path, ehdr.e_machine),
        "read it on a machine of that architecture");
  }
  file.machine_ = ehdr.e_machine;

  if (ehdr.e_phentsize != sizeof(Elf64_Phdr)) {
    return make_error(ErrorKind::Corrupt,
                      fmt::format("{}: program headers of {} bytes, not {}", path, ehdr.e_phentsize, sizeof(Elf64_Phdr)),
                      "the file is damaged");
  }
  size_t phnum = 0;
  uint64_t table_end = ehdr.e_phoff + uint64_t{ehdr.e_phentsize} * (ehdr.e_phnum == PN_XNUM ? 0 : ehdr.e_phnum);
  if (table_end > file.size_ || elf_getphdrnum(handle.elf, &phnum) != 0 ||
      ehdr.e_phoff + uint64_t{ehdr.e_phentsize} * phnum > file.size_) {
    return make_error(ErrorKind::Truncated,
                      fmt::format("{} is cut inside its program header table ({} bytes long)", path, file.size_),
                      "the dump was cut short, e.g. by a full disk or ulimit -c; dump again");
  }
  if (phnum > kMaxSegments) {
    return make_error(ErrorKind::Corrupt, fmt::format("{}: {} segments is implausibly many", path, phnum),
                      "the file is damaged");
  }

  std::vector<GElf_Phdr> phdrs(phnum);
  uint64_t furthest = 0;  // the end of the last byte any segment claims
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr& phdr = phdrs[i];
    if (gelf_getphdr(handle.elf, static_cast<int>(i), &phdr) == nullptr ||
        phdr.p_offset + phdr.p_filesz < phdr.p_offset) {
      return make_error(ErrorKind::Corrupt, fmt::format("{}: program header {} is unreadable or impossible", path, i));
    }
    if (phdr.p_type == PT_LOAD || phdr.p_type == PT_NOTE) furthest = std::max(furthest, phdr.p_offset + phdr.p_filesz);
  }
  if (furthest > file.size_) file.missing_bytes_ = furthest - file.size_;

  for (size_t i = 0; i < phnum; ++i) {
    const GElf_Phdr& phdr = phdrs[i];
    if (phdr.p_type == PT_LOAD) {
      if (phdr.p_filesz > phdr.p_memsz || phdr.p_vaddr + phdr.p_memsz < phdr.p_vaddr) {
        return make_error(ErrorKind::Corrupt,
                          fmt::format("{}: segment {} at {:#x} has impossible sizes", path, i, phdr.p_vaddr));
      }
      if (phdr.p_memsz > 0) {
        file.segments_.push_back({phdr.p_vaddr, phdr.p_memsz, phdr.p_offset, phdr.p_filesz, phdr.p_flags});
      }
    } else if (phdr.p_type == PT_NOTE) {
      if (phdr.p_offset + phdr.p_filesz > file.size_) {
        // gdb writes its notes after the segments: a gcore dump cut anywhere loses them.
        return make_error(ErrorKind::Truncated,
                          fmt::format("{} is truncated: {} bytes missing at its end, its notes (threads, mapped files) "
                                      "among them",
                                      path, file.missing_bytes_),
                          "the dump was cut short, e.g. by a full disk or ulimit -c; dump again");
      }
      PYFRAMES_CHECK(read_notes(handle.elf, phdr, path, file.notes_));
    }
  }
  std::sort(file.segments_.begin(), file.segments_.end(),
            [](const Segment& a, const Segment& b) { return a.vaddr < b.vaddr; });
  return file;
}

}  // namespace pyframes::core
