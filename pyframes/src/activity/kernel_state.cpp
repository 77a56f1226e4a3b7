// The kernel's view of a thread: scheduler state from /proc/PID/task/TID/stat, the system call
// a sleeping thread is blocked in from /proc/PID/task/TID/syscall ("202 0x7f.. 0x80 ..." while
// blocked; "running" while it runs; readable with the same rights as the memory), and wchan.
#include <fmt/format.h>

#include <charconv>

#include "process/proc_info.h"
#include "pyframes/thread_activity.h"

namespace pyframes {

namespace {

std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n')) ++i;
    size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\n') ++i;
    if (i > start) out.push_back(text.substr(start, i - start));
  }
  return out;
}

template <class T>
std::optional<T> number(std::string_view word, int base) {
  if (base == 16 && word.rfind("0x", 0) == 0) word.remove_prefix(2);
  T value{};
  auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value, base);
  if (ec != std::errc() || end != word.data() + word.size() || word.empty()) return std::nullopt;
  return value;
}

// "NR ARG1..ARG6 SP PC" while blocked in a system call; "-1 SP PC" when blocked outside one;
// "running" while it runs.
void parse_syscall(std::string_view text, KernelThreadState& out) {
  auto fields = words(text);
  if (fields.size() < 7) return;
  auto nr = number<int64_t>(fields[0], 10);
  if (!nr || *nr < 0) return;
  out.syscall = *nr;
  for (size_t i = 1; i <= 6; ++i) out.syscall_args.push_back(number<uint64_t>(fields[i], 16).value_or(0));
}

}  // namespace

std::optional<KernelThreadState> read_kernel_thread_state(int64_t pid, int64_t tid) {
  auto state = proc_thread_state(static_cast<pid_t>(pid), static_cast<pid_t>(tid));
  if (!state) return std::nullopt;
  KernelThreadState out;
  out.state = *state;
  if (out.state != 'R') {
    if (auto text = read_proc_text(fmt::format("/proc/{}/task/{}/syscall", pid, tid), 256)) parse_syscall(*text, out);
    if (!out.syscall) {  // unreadable (or between calls): the kernel function it sleeps in says a little
      if (auto wchan = read_proc_text(fmt::format("/proc/{}/task/{}/wchan", pid, tid), 128); wchan && *wchan != "0") {
        out.wchan = *wchan;
      }
    }
  }
  return out;
}

std::unordered_map<int64_t, KernelThreadState> read_kernel_thread_states(int64_t pid) {
  std::unordered_map<int64_t, KernelThreadState> out;
  for (pid_t tid : proc_thread_ids(static_cast<pid_t>(pid))) {
    if (auto state = read_kernel_thread_state(pid, tid)) out.emplace(tid, std::move(*state));
  }
  return out;
}

}  // namespace pyframes
