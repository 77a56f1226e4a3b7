// --lock: stop every thread of a process for a consistent snapshot (PTRACE_SEIZE +
// PTRACE_INTERRUPT, which, unlike SIGSTOP, leaves no trace in the target's signal state), and
// always resume them: the destructor detaches, on success, on error and on early return.
#pragma once

#include <sys/types.h>

#include <vector>

#include "pyframes/result.h"

namespace pyframes {

class ThreadLock {
 public:
  // Stops every thread of `pid` (threads born while stopping are stopped too).
  static Result<ThreadLock> acquire(pid_t pid);
  ~ThreadLock();
  ThreadLock(ThreadLock&& other) noexcept : pid_(other.pid_), tids_(std::move(other.tids_)) { other.tids_.clear(); }
  ThreadLock& operator=(ThreadLock&&) = delete;
  ThreadLock(const ThreadLock&) = delete;
  ThreadLock& operator=(const ThreadLock&) = delete;

  size_t stopped_threads() const { return tids_.size(); }

 private:
  explicit ThreadLock(pid_t pid) : pid_(pid) {}
  void release() noexcept;

  pid_t pid_;
  std::vector<pid_t> tids_;  // seized threads, detached on release
};

}  // namespace pyframes
