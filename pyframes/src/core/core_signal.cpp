// Names for the signal that ended a process, as people know them from kill -l and dmesg.
#include <fmt/format.h>

#include "pyframes/core.h"

namespace pyframes {

namespace {

// Linux numbers, identical on x86-64 and AArch64.
const char* const kSignalNames[] = {
    nullptr,   "SIGHUP",  "SIGINT",    "SIGQUIT", "SIGILL",  "SIGTRAP", "SIGABRT",  "SIGBUS",   "SIGFPE",
    "SIGKILL", "SIGUSR1", "SIGSEGV",   "SIGUSR2", "SIGPIPE", "SIGALRM", "SIGTERM",  "SIGSTKFLT", "SIGCHLD",
    "SIGCONT", "SIGSTOP", "SIGTSTP",   "SIGTTIN", "SIGTTOU", "SIGURG",  "SIGXCPU",  "SIGXFSZ",  "SIGVTALRM",
    "SIGPROF", "SIGWINCH", "SIGIO",    "SIGPWR",  "SIGSYS"};

constexpr int kSigIll = 4, kSigTrap = 5, kSigBus = 7, kSigFpe = 8, kSigSegv = 11;

const char* fault_code(int number, int code) {
  switch (number) {
    case kSigSegv:
      switch (code) {
        case 1: return "SEGV_MAPERR";
        case 2: return "SEGV_ACCERR";
        case 3: return "SEGV_BNDERR";
        case 4: return "SEGV_PKUERR";
        default: return nullptr;
      }
    case kSigBus:
      switch (code) {
        case 1: return "BUS_ADRALN";
        case 2: return "BUS_ADRERR";
        case 3: return "BUS_OBJERR";
        case 4: return "BUS_MCEERR_AR";
        case 5: return "BUS_MCEERR_AO";
        default: return nullptr;
      }
    case kSigFpe:
      switch (code) {
        case 1: return "FPE_INTDIV";
        case 2: return "FPE_INTOVF";
        case 3: return "FPE_FLTDIV";
        case 4: return "FPE_FLTOVF";
        case 5: return "FPE_FLTUND";
        case 6: return "FPE_FLTRES";
        case 7: return "FPE_FLTINV";
        case 8: return "FPE_FLTSUB";
        default: return nullptr;
      }
    case kSigIll:
      switch (code) {
        case 1: return "ILL_ILLOPC";
        case 2: return "ILL_ILLOPN";
        case 3: return "ILL_ILLADR";
        case 4: return "ILL_ILLTRP";
        case 5: return "ILL_PRVOPC";
        case 6: return "ILL_PRVREG";
        case 7: return "ILL_COPROC";
        case 8: return "ILL_BADSTK";
        default: return nullptr;
      }
    case kSigTrap:
      return code == 1 ? "TRAP_BRKPT" : code == 2 ? "TRAP_TRACE" : nullptr;
    default: return nullptr;
  }
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
