#include "process/thread_lock.h"

#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>

#include "process/proc_info.h"

namespace pyframes {

namespace {

constexpr int kMaxPasses = 8;
constexpr long kStopWaitMs = 1000;

// Waits for the seized thread's interrupt stop, at most kStopWaitMs (a thread in an
// uninterruptible sleep may take long; memory reads work anyway, the snapshot is then only
// as consistent as that thread allows).
void wait_for_stop(pid_t tid) {
  timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    int status = 0;
    pid_t got = ::waitpid(tid, &status, __WALL | WNOHANG);
    if (got == tid || (got < 0 && errno != EINTR)) return;
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long elapsed_ms = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
    if (elapsed_ms > kStopWaitMs) return;
    timespec pause{0, 200000};
    nanosleep(&pause, nullptr);
  }
}

}  // namespace

Result<ThreadLock> ThreadLock::acquire(pid_t pid, const char* option) {
  ThreadLock lock(pid);
  for (int pass = 0; pass < kMaxPasses; ++pass) {
    std::vector<pid_t> tids = proc_thread_ids(pid);
    if (tids.empty() && pass == 0) {
      return make_error(ErrorKind::ProcessGone, fmt::format("process {} exited", pid));
    }
    bool new_threads = false;
    for (pid_t tid : tids) {
      if (std::find(lock.tids_.begin(), lock.tids_.end(), tid) != lock.tids_.end()) continue;
      if (::ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) != 0) {
        int error = errno;
        if (error == ESRCH) continue;  // the thread exited meanwhile
        if (error == EPERM || error == EACCES) {
          return make_error(ErrorKind::PermissionDenied,
                            fmt::format("cannot stop process {} for {}: {}", pid, option, std::strerror(error)),
                            fmt::format("run as the same user or root, or echo 0 > /proc/sys/kernel/yama/ptrace_scope, "
                                        "or grant CAP_SYS_PTRACE; or read without {}",
                                        option));
        }
        return make_error(ErrorKind::Io, fmt::format("cannot stop thread {} of process {}: {}", tid, pid,
                                                     std::strerror(error)));
      }
      lock.tids_.push_back(tid);
      new_threads = true;
      if (::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) == 0) wait_for_stop(tid);
    }
    if (!new_threads) return lock;  // a pass found nothing new: every thread is stopped
  }
  return lock;
}

void ThreadLock::release() noexcept {
  for (pid_t tid : tids_) ::ptrace(PTRACE_DETACH, tid, nullptr, nullptr);
  tids_.clear();
}

ThreadLock::~ThreadLock() { release(); }

}  // namespace pyframes
