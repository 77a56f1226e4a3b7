#include "errors.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <strings.h>

namespace fakenccl {
namespace {

enum class DebugLevel { kNone, kWarn, kInfo };

DebugLevel debug_level() {
  static const DebugLevel level = [] {
    const char* raw = std::getenv("NCCL_DEBUG");
    if (raw == nullptr) return DebugLevel::kNone;
    if (strcasecmp(raw, "INFO") == 0 || strcasecmp(raw, "TRACE") == 0) return DebugLevel::kInfo;
    if (strcasecmp(raw, "WARN") == 0) return DebugLevel::kWarn;
    return DebugLevel::kNone;
  }();
  return level;
}

std::mutex& error_mutex() {
  static auto* m = new std::mutex;  // never destroyed: stream workers may still report at exit
  return *m;
}
char g_last_error[1024] = "";

void print_line(const char* level, std::string_view message) {
  char host[64] = "?";
  gethostname(host, sizeof host - 1);
  std::fprintf(stdout, "%s:%d:%ld [fakenccl] NCCL %s %.*s\n", host, static_cast<int>(getpid()),
               static_cast<long>(syscall(SYS_gettid)), level, static_cast<int>(message.size()),
               message.data());
  std::fflush(stdout);
}

}  // namespace

void set_last_error(std::string_view message) {
  {
    std::lock_guard lock(error_mutex());
    const std::size_t n = std::min(message.size(), sizeof g_last_error - 1);
    std::memcpy(g_last_error, message.data(), n);
    g_last_error[n] = '\0';
  }
  if (debug_level() != DebugLevel::kNone) print_line("WARN", message);
}

const char* last_error() { return g_last_error; }

const char* error_string(ncclResult_t code) {
  switch (code) {  // NCCL's own wording, so messages read the same as with the real library
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError: return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
  }
}

void debug_info(std::string_view message) {
  if (debug_level() == DebugLevel::kInfo) print_line("INFO", message);
}

}  // namespace fakenccl
