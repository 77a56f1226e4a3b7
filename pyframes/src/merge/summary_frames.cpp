// What a summary line names of a stack: the innermost Python frame and the innermost native frame
// below it that is the program's own code, not the plumbing every wait goes through (libc,
// libpthread, the dynamic loader, the interpreter: `__futex_abstimed_wait_common`,
// `enum_next.lto_priv.0`). Plumbing is told by the frame's module; by its name only when the
// module is unknown.
#include <array>
#include <string_view>

#include "pyframes/merge.h"

namespace pyframes {

namespace {

std::string_view base_name(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool starts_with_any(std::string_view text, const auto& prefixes) {
  for (std::string_view prefix : prefixes) {
    if (text.starts_with(prefix)) return true;
  }
  return false;
}

constexpr std::array<std::string_view, 9> kPlumbingModules = {
    "libc.so", "libc-", "libpthread", "ld-linux", "ld64.so", "libdl", "librt", "libpython", "libm.so"};

// Unknown module: libc's and the interpreter's usual names.
constexpr std::array<std::string_view, 15> kPlumbingNames = {
    "__",     "_Py",  "Py",         "pthread_",          "futex",  "clock_nanosleep", "nanosleep", "syscall",
    "epoll_", "sem_", "cfunction_", "method_vectorcall", "_start", "start_thread",    "clone"};

}  // namespace

bool is_native_plumbing(const Frame& frame, std::string_view executable) {
  if (frame.kind != Frame::Kind::Native) return false;
  if (!frame.module.empty()) {
    if (!executable.empty() && frame.module == executable) return true;
    const std::string_view name = base_name(frame.module);
    if (!executable.empty() && name == base_name(executable)) return true;
    if (starts_with_any(name, kPlumbingModules)) return true;
    // The interpreter executable under any name: python3, python3.11, python3.11d.
    return name.starts_with("python") && name.find(".so") == std::string_view::npos;
  }
  return starts_with_any(frame.function, kPlumbingNames);
}

SummaryFrames summary_frames(const std::vector<const Frame*>& inner_first, std::string_view executable) {
  SummaryFrames out;
  for (const Frame* frame : inner_first) {
    if (frame->kind == Frame::Kind::Python) {
      out.python = frame;
      break;
    }
    if (out.native == nullptr && !is_native_plumbing(*frame, executable)) out.native = frame;
  }
  // A thread that runs no Python: its innermost own frame, else its innermost frame.
  if (out.python == nullptr && out.native == nullptr && !inner_first.empty()) out.native = inner_first.front();
  return out;
}

}  // namespace pyframes
