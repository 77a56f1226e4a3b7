// looks_like_core: lets a command line tell a core path from a PID by the file's first bytes.
#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "core/unique_fd.h"
#include "pyframes/core.h"

namespace pyframes {

bool looks_like_core(const std::string& path) {
  core::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  unsigned char header[sizeof(Elf64_Ehdr)] = {};
  if (!fd.valid()) return false;
  ssize_t n = ::pread(fd.get(), header, sizeof header, 0);
  if (n >= 2 && header[0] == 0x1f && header[1] == 0x8b) return true;
  if (n < static_cast<ssize_t>(sizeof header) || std::memcmp(header, ELFMAG, SELFMAG) != 0) return false;
  Elf64_Ehdr ehdr;
  std::memcpy(&ehdr, header, sizeof ehdr);
  return ehdr.e_type == ET_CORE;
}

}  // namespace pyframes
