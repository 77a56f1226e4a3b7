#include "pyframes/memory.h"

#include <fmt/format.h>

namespace pyframes {

const char* to_string(ReadStatus status) {
  switch (status) {
    case ReadStatus::Ok: return "ok";
    case ReadStatus::Unmapped: return "address not mapped";
    case ReadStatus::ProcessGone: return "process exited";
    case ReadStatus::PermissionDenied: return "permission denied";
    case ReadStatus::IoError: return "I/O error";
  }
  return "unknown";
}

std::optional<std::string> Memory::read_c_string(uint64_t address, size_t max_size) const {
  // Read in small chunks so a string near the end of a mapping is still readable.
  std::string out;
  constexpr size_t kChunk = 64;
  char buffer[kChunk];
  while (out.size() < max_size) {
    size_t want = std::min(kChunk, max_size - out.size());
    if (read(address + out.size(), buffer, want) != ReadStatus::Ok) {
      // Fall back to byte reads: the chunk may cross into an unmapped page.
      if (read(address + out.size(), buffer, 1) != ReadStatus::Ok) return std::nullopt;
      want = 1;
    }
    for (size_t i = 0; i < want; ++i) {
      if (buffer[i] == '\0') return out;
      out.push_back(buffer[i]);
    }
  }
  return std::nullopt;
}

Error Memory::read_error(ReadStatus status, uint64_t address, const char* what) const {
  ErrorKind kind = ErrorKind::BadAddress;
  std::string hint;
  switch (status) {
    case ReadStatus::ProcessGone: kind = ErrorKind::ProcessGone; break;
    case ReadStatus::PermissionDenied:
      kind = ErrorKind::PermissionDenied;
      hint = "run as the same user or root, or echo 0 > /proc/sys/kernel/yama/ptrace_scope, or grant CAP_SYS_PTRACE";
      break;
    case ReadStatus::IoError: kind = ErrorKind::Io; break;
    default: break;
  }
  return make_error(kind, fmt::format("cannot read {} at {:#x} in {}: {}", what, address, describe(), to_string(status)),
                    std::move(hint));
}

}  // namespace pyframes
