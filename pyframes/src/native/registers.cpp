#include "native/registers.h"

#include <sys/ptrace.h>
#include <sys/user.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <fmt/format.h>

namespace pyframes::native {

#if defined(__x86_64__)

namespace {

// Index into struct user_regs_struct (viewed as 64-bit words) of each libunwind register.
constexpr size_t word(size_t byte_offset) { return byte_offset / sizeof(uint64_t); }

constexpr std::array<size_t, kUnwoundRegisters> kKernelIndex = {
    word(offsetof(user_regs_struct, rax)), word(offsetof(user_regs_struct, rdx)),
    word(offsetof(user_regs_struct, rcx)), word(offsetof(user_regs_struct, rbx)),
    word(offsetof(user_regs_struct, rsi)), word(offsetof(user_regs_struct, rdi)),
    word(offsetof(user_regs_struct, rbp)), word(offsetof(user_regs_struct, rsp)),
    word(offsetof(user_regs_struct, r8)),  word(offsetof(user_regs_struct, r9)),
    word(offsetof(user_regs_struct, r10)), word(offsetof(user_regs_struct, r11)),
    word(offsetof(user_regs_struct, r12)), word(offsetof(user_regs_struct, r13)),
    word(offsetof(user_regs_struct, r14)), word(offsetof(user_regs_struct, r15)),
    word(offsetof(user_regs_struct, rip)),
};

static_assert(sizeof(user_regs_struct) % sizeof(uint64_t) == 0);

}  // namespace

Result<Registers> registers_from_kernel_order(std::span<const uint64_t> user_regs) {
  if (user_regs.size() < sizeof(user_regs_struct) / sizeof(uint64_t)) {
    return make_error(ErrorKind::Corrupt, fmt::format("{} general registers where x86-64 has {}", user_regs.size(),
                                                      sizeof(user_regs_struct) / sizeof(uint64_t)));
  }
  Registers registers;
  for (size_t i = 0; i < kKernelIndex.size(); ++i) registers.values[i] = user_regs[kKernelIndex[i]];
  return registers;
}

Result<Registers> stopped_thread_registers(pid_t tid) {
  user_regs_struct regs{};
  if (::ptrace(PTRACE_GETREGS, tid, nullptr, &regs) != 0) {
    const int error = errno;
    return make_error(error == ESRCH ? ErrorKind::ProcessGone : ErrorKind::Io,
                      error == ESRCH ? fmt::format("thread {} did not stop (or exited)", tid)
                                     : fmt::format("cannot read the registers of thread {}: {}", tid,
                                                   std::strerror(error)));
  }
  uint64_t words[sizeof(user_regs_struct) / sizeof(uint64_t)];
  std::memcpy(words, &regs, sizeof regs);
  return registers_from_kernel_order(words);
}

#else  // other machines: the register numbering above is x86-64's

Result<Registers> registers_from_kernel_order(std::span<const uint64_t>) {
  return make_error(ErrorKind::UnsupportedVersion, "native stacks are read on x86-64 only");
}

Result<Registers> stopped_thread_registers(pid_t) {
  return make_error(ErrorKind::UnsupportedVersion, "native stacks are read on x86-64 only");
}

#endif

}  // namespace pyframes::native
