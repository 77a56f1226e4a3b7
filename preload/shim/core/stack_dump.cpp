#include "shim/core/stack_dump.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "memory/self_memory.h"
#include "pyframes/pyframes.h"
#include "shim/core/callsite_capture.h"

namespace hangshim::shim {

namespace {

std::string render(const pyframes::Process& process) {
  std::string out = fmt::format("Python {} — {} thread(s), most recent call first\n", process.python_version,
                                process.threads.size());
  for (const auto& t : process.threads) {
    out += fmt::format("\nThread {:#x}", t.thread_id);
    if (t.native_id != 0) out += fmt::format(" (native {})", t.native_id);
    if (!t.name.empty()) out += fmt::format(" \"{}\"", t.name);
    if (t.gil) out += " holds the GIL";
    out += "\n";
    if (t.frames.empty()) out += "  (no Python frames)\n";
    for (const auto& f : t.frames) {
      out += fmt::format("  File \"{}\", line {}, in {}\n", f.file, f.line, f.qualname.empty() ? f.function : f.qualname);
    }
    if (t.truncated) out += fmt::format("  (stack cut: {})\n", t.truncation_reason);
  }
  for (const auto& w : process.warnings) out += fmt::format("\nwarning: {}\n", w);
  return out;
}

bool write_all(int fd, const std::string& text) {
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

bool write_python_stacks(const std::string& path, CallsiteCapture* callsites, const std::string& headline) noexcept {
  try {
    std::string text = fmt::format("hangshim: {}\n\n", headline);
    pyframes::PythonTarget target;
    pyframes::Layout layout;
    if (callsites != nullptr && callsites->python(&target, &layout)) {
      pyframes::SelfMemory memory(pyframes::SelfMemory::Mode::Syscall);
      auto process = pyframes::read_stacks(memory, target, layout, pyframes::ReadOptions{});
      text += process ? render(*process) : fmt::format("Python stacks unreadable: {}\n", process.error().message);
    } else {
      text += "No Python call-site capture in this process (not a Python program, or HANGSHIM_CALLSITES=0).\n";
    }
    ::unlink(path.c_str());
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    bool ok = write_all(fd, text);
    ::close(fd);
    return ok;
  } catch (...) {
    return false;
  }
}

}  // namespace hangshim::shim
