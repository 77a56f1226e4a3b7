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
  // Stops every thread of `pid` (threads born while stopping are stopped too). `option` names
  // what asked for the stop in error messages ("--lock", "--native").
  static Result<ThreadLock> acquire(pid_t pid, const char* option = "--lock");
  ~ThreadLock();
  ThreadLock(ThreadLock&& other) noexcept : pid_(other.pid_), tids_(std::move(other.tids_)) { other.tids_.clear(); }
  ThreadLock& operator=(ThreadLock&&) = delete;
  ThreadLock(const ThreadLock&) = delete;
  ThreadLock& operator=(const ThreadLock&) = delete;

  size_t stopped_threads() const { return tids_.size(); }
  // The seized threads, in the order they were stopped; ptrace requests on them must come from
  // the thread that acquired the lock.
  const std::vector<pid_t>& thread_ids() const { return tids_; }

 private:
  explicit ThreadLock(pid_t pid) : pid_(pid) {}
  void release() noexcept;

  pid_t pid_;
  std::vector<pid_t> tids_;  // seized threads, detached on release
};

}  // namespace pyframes
