// The registers a native unwind starts from, in libunwind's x86-64 numbering. Live threads give
// them through ptrace, cores through NT_PRSTATUS; both come in the kernel's order (struct
// user_regs_struct), converted here once.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <span>

#include "pyframes/result.h"

namespace pyframes::native {

// UNW_X86_64_RAX (0) .. UNW_X86_64_R15 (15), UNW_X86_64_RIP (16).
inline constexpr int kUnwoundRegisters = 17;

struct Registers {
  std::array<uint64_t, kUnwoundRegisters> values{};
  uint64_t pc() const { return values[16]; }
  uint64_t sp() const { return values[7]; }
};

// From the general registers in struct user_regs_struct order (NT_PRSTATUS, PTRACE_GETREGS).
// Fails when the array is too short to hold them.
Result<Registers> registers_from_kernel_order(std::span<const uint64_t> user_regs);

// PTRACE_GETREGS of `tid`, which must be in a ptrace stop of the calling thread.
Result<Registers> stopped_thread_registers(pid_t tid);

}  // namespace pyframes::native
