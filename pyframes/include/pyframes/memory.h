// The one thing that differs between targets: where bytes come from.
// Sources: a live process (process_vm_readv, /proc/PID/mem fallback), a core file (PT_LOAD
// segments plus the files NT_FILE names) and the current process (the shim reading itself).
// Every read is bounds-checked and may fail: the target may be hostile, half-written or gone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>

#include "pyframes/result.h"

namespace pyframes {

// Outcome of a raw read. Cheap to return: the hot path of the shim reads through this interface
// and must not allocate; callers that need a message turn a status into an Error.
enum class ReadStatus : uint8_t {
  Ok,
  Unmapped,          // nothing readable at that address (or only part of the range is)
  ProcessGone,       // the target exited
  PermissionDenied,  // the OS refused (ptrace_scope, different user, no CAP_SYS_PTRACE)
  IoError,           // anything else
};

const char* to_string(ReadStatus status);

class Memory {
 public:
  virtual ~Memory() = default;
  Memory() = default;
  Memory(const Memory&) = delete;
  Memory& operator=(const Memory&) = delete;

  // Copies exactly `size` bytes at `address` into `out`. Never faults, never blocks for long.
  virtual ReadStatus read(uint64_t address, void* out, size_t size) const noexcept = 0;

  // A short description of the target for error messages ("process 1234", "core core.1234").
  virtual std::string describe() const = 0;

  template <class T>
  std::optional<T> read_value(uint64_t address) const noexcept {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    if (read(address, &value, sizeof(T)) != ReadStatus::Ok) return std::nullopt;
    return value;
  }

  std::optional<uint64_t> read_pointer(uint64_t address) const noexcept {
    return read_value<uint64_t>(address);
  }

  // Reads up to `max_size` bytes of a NUL-terminated C string; nullopt if unreadable or no NUL.
  std::optional<std::string> read_c_string(uint64_t address, size_t max_size = 1024) const;

  // Turns a failed read into an Error naming what was being read.
  Error read_error(ReadStatus status, uint64_t address, const char* what) const;
};

}  // namespace pyframes
