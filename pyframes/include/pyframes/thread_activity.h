// What each thread is doing: holding the GIL, waiting for it, idle (blocked in a wait), or
// running without it. Three witnesses, best first:
//   - the engine: which thread state holds the GIL (Thread::gil);
//   - the kernel, for live processes: the scheduler state (/proc/PID/task/TID/stat) and the
//     system call a sleeping thread is blocked in (/proc/PID/task/TID/syscall). A thread asleep
//     in futex() on the GIL's own mutex or condition variables waits for the GIL; asleep
//     anywhere else (a lock, sleep, select, a socket) it is idle;
//   - the frames, when the kernel cannot be asked (core files): the innermost Python frames in
//     a blocking call of the standard library (Condition.wait, Thread.join, queue.get,
//     selectors, sockets, subprocess) mean idle.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "pyframes/model.h"
#include "pyframes/target.h"

namespace pyframes {

// The kernel's view of one thread of a live process.
struct KernelThreadState {
  char state = '?';                     // R, S, D, T, t, Z, ... (/proc/PID/task/TID/stat)
  std::optional<int64_t> syscall;       // the system call it is blocked in; nullopt when running
                                        // or when /proc/PID/task/TID/syscall is unreadable
  std::vector<uint64_t> syscall_args;   // its arguments (futex: the address waited on first)
  std::string wchan;                    // the kernel function it sleeps in, empty when unknown
};

// The kernel's view of `tid` in `pid`, nullopt when the thread is gone.
std::optional<KernelThreadState> read_kernel_thread_state(int64_t pid, int64_t tid);
// Every thread of `pid`, by TID.
std::unordered_map<int64_t, KernelThreadState> read_kernel_thread_states(int64_t pid);

// True when the innermost Python frames are in a blocking call of the standard library.
bool in_known_wait(const std::vector<Frame>& frames);

// Where the GIL's locks live in the target (mutexes and condition variables of every
// interpreter's GIL), for telling a GIL wait from any other futex wait. Empty when unknown.
using GilLockRanges = std::vector<AddressRange>;

// The state of one thread. `kernel` is null when the kernel cannot be asked (core files, a
// thread that is gone); `someone_holds_gil` says whether any thread of the process holds it.
ThreadState classify_thread(const Thread& thread, const KernelThreadState* kernel, const GilLockRanges& gil_locks,
                            bool someone_holds_gil);

// Sets Thread::state for every thread of `process` (kernel views looked up by native id).
void assign_thread_states(Process& process, const std::unordered_map<int64_t, KernelThreadState>& kernel,
                          const GilLockRanges& gil_locks);
// Frames and the GIL flag only: for targets without a kernel to ask (core files).
void assign_thread_states(Process& process);

}  // namespace pyframes
