#include "shim/core/stack_dump.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "pyframes/self_memory.h"
#include "pyframes/callsite.h"
#include "pyframes/layout.h"
#include "shim/core/callsite_capture.h"

namespace hangshim::shim {

namespace {

constexpr size_t kMaxThreads = 1024;
constexpr size_t kMaxFrames = 256;

std::string thread_name(int64_t native_id) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%lld/comm", static_cast<long long>(native_id));
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char buffer[64] = {};
  ssize_t n = ::read(fd, buffer, sizeof buffer - 1);
  ::close(fd);
  std::string name(buffer, n > 0 ? static_cast<size_t>(n) : 0);
  while (!name.empty() && name.back() == '\n') name.pop_back();
  return name;
}

// Every thread's Python frames through the allocation-free call-site API of pyframes (the same
// walker, over memory read through the kernel: the other threads keep running meanwhile).
std::string render(const pyframes::Memory& memory, const pyframes::PythonTarget& target, const pyframes::Layout& layout) {
  std::vector<pyframes::ThreadStateRef> threads(kMaxThreads);
  size_t count = pyframes::list_thread_states(memory, layout, target, threads.data(), threads.size());
  std::string out = fmt::format("Python {}: {} thread(s), oldest first; frames most recent call first\n",
                                target.version.str(), count);
  std::vector<pyframes::CodeLocation> locations(kMaxFrames);
  for (size_t t = count; t-- > 0;) {
    const auto& thread = threads[t];
    out += fmt::format("\nThread {:#x}", thread.thread_id);
    int64_t native = 0;
    if (layout.thread_state.native_thread_id >= 0 &&
        memory.read(thread.tstate + static_cast<uint64_t>(layout.thread_state.native_thread_id), &native, 8) ==
            pyframes::ReadStatus::Ok &&
        native > 0) {
      out += fmt::format(" (native {})", native);
      std::string name = thread_name(native);
      if (!name.empty()) out += fmt::format(" \"{}\"", name);
    }
    out += "\n";
    size_t frames = pyframes::collect_code_locations(memory, layout, thread.tstate, locations.data(), locations.size());
    if (frames == 0) out += "  (no Python frames)\n";
    for (size_t f = 0; f < frames; ++f) {
      auto frame = pyframes::describe_code_location(memory, layout, locations[f]);
      if (!frame) {
        out += fmt::format("  (frame unreadable: {})\n", frame.error().message);
        continue;
      }
      out += fmt::format("  File \"{}\", line {}, in {}\n", frame->file, frame->line,
                         frame->qualname.empty() ? frame->function : frame->qualname);
    }
    if (frames == locations.size()) out += "  (deeper frames not shown)\n";
  }
  return out;
}

// 0 when every byte was written, else the errno (ENOSPC on a full HANGSHIM_DIR).
int write_all(int fd, const std::string& text) {
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    p += n;
    left -= static_cast<size_t>(n);
  }
  return 0;
}

}  // namespace

std::string write_python_stacks(const std::string& path, CallsiteCapture* callsites,
                                const std::string& headline) noexcept {
  try {
    std::string text = fmt::format("hangshim: {}\n\n", headline);
    pyframes::PythonTarget target;
    pyframes::Layout layout;
    if (callsites != nullptr && callsites->python(&target, &layout)) {
      pyframes::SelfMemory memory(pyframes::SelfMemory::Mode::Syscall);
      text += render(memory, target, layout);
    } else {
      text += "No Python call-site capture in this process (not a Python program, or HANGSHIM_CALLSITES=0).\n";
    }
    ::unlink(path.c_str());
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return std::strerror(errno);
    int err = write_all(fd, text);
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err == 0) return {};
    ::unlink(path.c_str());  // half a dump would read as a complete one
    return std::strerror(err);
  } catch (...) {
    return "out of memory";
  }
}

}  // namespace hangshim::shim
