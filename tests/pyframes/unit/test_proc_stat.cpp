// /proc/PID/stat parsed once for all of hangshim (pyframes/proc_stat.h), checked against what
// the kernel and libc say about this process, a child and a thread whose name holds
// parentheses and spaces.
#include <doctest/doctest.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "pyframes/proc_stat.h"

using pyframes::ProcStat;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

TEST_CASE("proc stat: this process's state, parent and start as the kernel and libc say") {
  ProcStat self;
  REQUIRE(pyframes::read_proc_stat(::getpid(), self));
  CHECK(self.state == 'R');  // it is running: it reads its own stat
  CHECK(self.ppid == ::getppid());
  // Started before now: /proc/uptime in clock ticks.
  double uptime = std::stod(slurp("/proc/uptime"));
  CHECK(self.start_ticks > 0);
  CHECK(static_cast<double>(self.start_ticks) <= uptime * static_cast<double>(::sysconf(_SC_CLK_TCK)) + 1);

  // A child started after us, with us as its parent; reaped, it is gone.
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(pipe_fds[1]);  // only the test's end keeps the pipe open
    char byte;
    (void)!::read(pipe_fds[0], &byte, 1);
    ::_exit(0);
  }
  ProcStat kid;
  REQUIRE(pyframes::read_proc_stat(child, kid));
  CHECK(kid.ppid == ::getpid());
  CHECK(kid.start_ticks >= self.start_ticks);
  ::close(pipe_fds[1]);
  REQUIRE(::waitpid(child, nullptr, 0) == child);
  ::close(pipe_fds[0]);
  CHECK_FALSE(pyframes::read_proc_stat(child, kid));
  CHECK_FALSE(pyframes::read_proc_stat(0, kid));
  CHECK_FALSE(pyframes::read_proc_stat(-1, kid));
}

TEST_CASE("proc stat: a thread named with parentheses and spaces, blocked, reads as sleeping") {
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  std::atomic<long> tid{0};
  std::thread sleeper([&] {
    ::pthread_setname_np(::pthread_self(), ") x (y) ");
    tid = ::syscall(SYS_gettid);
    char byte;
    (void)!::read(pipe_fds[0], &byte, 1);  // blocks until the test writes
  });
  while (tid == 0) std::this_thread::yield();
  ProcStat thread;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);  // only a bug reaches it
  while (std::chrono::steady_clock::now() < deadline) {
    REQUIRE(pyframes::read_thread_stat(::getpid(), tid, thread));
    if (thread.state == 'S') break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  CHECK(thread.state == 'S');
  CHECK(thread.ppid == ::getppid());  // a thread's parent is its process's
  std::string text = slurp("/proc/self/task/" + std::to_string(tid.load()) + "/stat");
  (void)!::write(pipe_fds[1], "x", 1);
  sleeper.join();
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);

  // The text itself: whole it parses to what the file read gave; cut before field 22 it is refused.
  REQUIRE(text.find(") x (y) )") != std::string::npos);
  ProcStat parsed;
  REQUIRE(pyframes::parse_proc_stat(text, parsed));
  CHECK(parsed.ppid == thread.ppid);
  CHECK(parsed.start_ticks == thread.start_ticks);
  size_t field22 = text.rfind(')');
  for (int spaces = 0; spaces < 20; ++spaces) field22 = text.find(' ', field22 + 1);
  for (size_t cut = 0; cut < field22; ++cut) {
    CHECK_FALSE(pyframes::parse_proc_stat(std::string_view(text).substr(0, cut), parsed));
  }
}
