// Names for the signal that ended a process, as people know them from kill -l and dmesg.
#include <fmt/format.h>

#include <iterator>

#include "pyframes/core.h"

namespace pyframes {

namespace {

// Linux numbers, identical on x86-64 and AArch64.
const char* const kSignalNames[] = {nullptr,    "SIGHUP",  "SIGINT",    "SIGQUIT", "SIGILL",  "SIGTRAP",   "SIGABRT",
                                    "SIGBUS",   "SIGFPE",  "SIGKILL",   "SIGUSR1", "SIGSEGV", "SIGUSR2",   "SIGPIPE",
                                    "SIGALRM",  "SIGTERM", "SIGSTKFLT", "SIGCHLD", "SIGCONT", "SIGSTOP",   "SIGTSTP",
                                    "SIGTTIN",  "SIGTTOU", "SIGURG",    "SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF",
                                    "SIGWINCH", "SIGIO",   "SIGPWR",    "SIGSYS"};

// si_code names of signals raised by the CPU, from 1 (asm-generic/siginfo.h).
const char* const kIllCodes[] = {"ILL_ILLOPC", "ILL_ILLOPN", "ILL_ILLADR", "ILL_ILLTRP",
                                 "ILL_PRVOPC", "ILL_PRVREG", "ILL_COPROC", "ILL_BADSTK"};
const char* const kTrapCodes[] = {"TRAP_BRKPT", "TRAP_TRACE"};
const char* const kBusCodes[] = {"BUS_ADRALN", "BUS_ADRERR", "BUS_OBJERR", "BUS_MCEERR_AR", "BUS_MCEERR_AO"};
const char* const kFpeCodes[] = {"FPE_INTDIV", "FPE_INTOVF", "FPE_FLTDIV", "FPE_FLTOVF",
                                 "FPE_FLTUND", "FPE_FLTRES", "FPE_FLTINV", "FPE_FLTSUB"};
const char* const kSegvCodes[] = {"SEGV_MAPERR", "SEGV_ACCERR", "SEGV_BNDERR", "SEGV_PKUERR"};

struct FaultCodes {
  int signal;
  const char* const* names;
  size_t count;
};

const FaultCodes kFaultCodes[] = {{4, kIllCodes, std::size(kIllCodes)},
                                  {5, kTrapCodes, std::size(kTrapCodes)},
                                  {7, kBusCodes, std::size(kBusCodes)},
                                  {8, kFpeCodes, std::size(kFpeCodes)},
                                  {11, kSegvCodes, std::size(kSegvCodes)}};

const char* fault_code(int number, int code) {
  for (const auto& table : kFaultCodes) {
    if (table.signal == number && code >= 1 && static_cast<size_t>(code) <= table.count) return table.names[code - 1];
  }
  return nullptr;
}

const char* sender_code(int code) {
  switch (code) {
    case 0: return "kill";
    case -1: return "sigqueue";
    case -6: return "tgkill";
    default: return nullptr;
  }
}

}  // namespace

std::string CoreSignal::name() const {
  if (number > 0 && number < static_cast<int>(std::size(kSignalNames))) return kSignalNames[number];
  if (number >= 34 && number <= 64) return fmt::format("SIGRTMIN+{}", number - 34);
  return fmt::format("signal {}", number);
}

std::string CoreSignal::describe() const {
  if (const char* fault = fault_code(number, code)) return fmt::format("{} ({} at {:#x})", name(), fault, address);
  if (code == 0x80) return fmt::format("{} (sent by the kernel)", name());
  if (sender_pid > 0 && sender_pid == process_pid && code != 0x80) {
    return fmt::format("{} (raised by the process itself)", name());
  }
  if (const char* how = sender_code(code); how && sender_pid > 0) {
    return fmt::format("{} (sent by {} from pid {})", name(), how, sender_pid);
  }
  return name();
}

}  // namespace pyframes
