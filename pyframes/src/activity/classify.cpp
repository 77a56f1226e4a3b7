// classify_thread: the GIL flag first (a thread holding the GIL is the one everyone else may be
// waiting for, whatever it does), then the kernel, then the frames.
#include <sys/syscall.h>

#include "pyframes/thread_activity.h"

namespace pyframes {

namespace {

bool is_futex(const KernelThreadState& kernel) {
#ifdef SYS_futex_waitv
  if (kernel.syscall == SYS_futex_waitv) return true;
#endif
  return kernel.syscall == SYS_futex;
}

bool on_gil_lock(const KernelThreadState& kernel, const GilLockRanges& gil_locks) {
  if (kernel.syscall != SYS_futex || kernel.syscall_args.empty()) return false;
  for (const AddressRange& range : gil_locks) {
    if (range.contains(kernel.syscall_args.front())) return true;
  }
  return false;
}

ThreadState from_frames(const Thread& thread) {
  return in_known_wait(thread.frames) ? ThreadState::Idle : ThreadState::Unknown;
}

// Asleep in the kernel: on the GIL, or on anything else.
ThreadState asleep(const Thread& thread, const KernelThreadState& kernel, const GilLockRanges& gil_locks,
                   bool someone_holds_gil) {
  const bool futex = kernel.syscall ? is_futex(kernel) : kernel.wchan.find("futex") != std::string::npos;
  if (!futex) return ThreadState::Idle;  // sleep, select, poll, read, accept, wait4, ...
  if (!gil_locks.empty() && kernel.syscall) {
    return on_gil_lock(kernel, gil_locks) ? ThreadState::WaitingForGil : ThreadState::Idle;
  }
  // The GIL's address is unknown (a stripped 3.6): a futex wait outside the standard library's
  // blocking calls while another thread holds the GIL is most likely a wait for it.
  if (in_known_wait(thread.frames) || !someone_holds_gil) return ThreadState::Idle;
  return ThreadState::WaitingForGil;
}

}  // namespace

ThreadState classify_thread(const Thread& thread, const KernelThreadState* kernel, const GilLockRanges& gil_locks,
                            bool someone_holds_gil) {
  if (thread.gil) return ThreadState::HoldsGil;
  if (kernel == nullptr) return from_frames(thread);
  switch (kernel->state) {
    case 'R': return ThreadState::Running;  // on a CPU (or runnable) without the GIL: C code
    case 'S':
    case 'D': return asleep(thread, *kernel, gil_locks, someone_holds_gil);
    case 'Z':
    case 'X': return ThreadState::Unknown;
    default: return from_frames(thread);  // stopped or traced: what it would do is in the frames
  }
}

void assign_thread_states(Process& process, const std::unordered_map<int64_t, KernelThreadState>& kernel,
                          const GilLockRanges& gil_locks) {
  bool someone_holds_gil = false;
  for (const Thread& thread : process.threads) someone_holds_gil = someone_holds_gil || thread.gil;
  for (Thread& thread : process.threads) {
    auto found = thread.native_id != 0 ? kernel.find(thread.native_id) : kernel.end();
    thread.state = classify_thread(thread, found != kernel.end() ? &found->second : nullptr, gil_locks,
                                   someone_holds_gil);
  }
}

void assign_thread_states(Process& process) { assign_thread_states(process, {}, {}); }

}  // namespace pyframes
