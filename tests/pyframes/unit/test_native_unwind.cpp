// The native unwinder on a real process without Python: a forked child blocked in read() at
// the bottom of a known chain of C++ calls. The live unwind (ptrace) must find that chain in
// order, starting at the pc the kernel reports for the blocked system call; the unwind of a
// gcore dump of the same child must give the very same addresses; and the child must run on.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core_test_support.h"
#include "memory/process_memory.h"
#include "pyframes/proc_maps.h"
#include "native/native_reader.h"
#include "process/thread_lock.h"
#include "pyframes/core.h"
#include "run_program.h"

using namespace pyframes;

namespace native_test {

volatile int sink = 0;

// Each level calls the next and then uses the result, so none of the calls is a tail call
// and every level keeps a frame of its own. noipa: at -O3 (Release) GCC otherwise clones
// descend once per constant depth ("descend(int, int) [clone .constprop.3]"), and the frames
// no longer carry the name the test looks for.
__attribute__((noinline, noipa)) int descend(int depth, int fd) {
  if (depth == 0) {
    char byte = 0;
    const ssize_t n = ::read(fd, &byte, 1);
    sink = static_cast<int>(n);
    return static_cast<int>(n);
  }
  const int result = descend(depth - 1, fd);
  sink = result;
  return result + 1;
}

__attribute__((noinline, noipa)) int child_main(int fd) {
  const int result = descend(4, fd);
  sink = result;
  return result;
}

}  // namespace native_test

namespace {

// A forked child blocked in read() on a pipe; killed and reaped when the test ends.
class BlockedChild {
 public:
  BlockedChild() {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::close(fds[1]);
      native_test::child_main(fds[0]);
      ::_exit(0);
    }
    ::close(fds[0]);
    write_end_ = fds[1];
  }
  ~BlockedChild() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    ::close(write_end_);
  }
  pid_t pid() const { return pid_; }

  // /proc/PID/syscall of a thread blocked in read: "0 fd buf count ... sp pc"; the pc once the
  // child sits in read, 0 if it never gets there.
  uint64_t blocked_pc() const {
    // Polled until it does; the deadline only ends a run where it never gets there.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      std::ifstream in("/proc/" + std::to_string(pid_) + "/syscall");
      std::string line;
      std::getline(in, line);
      std::istringstream words(line);
      std::vector<std::string> fields;
      for (std::string word; words >> word;) fields.push_back(word);
      if (fields.size() == 9 && fields[0] == "0") return std::stoull(fields[8], nullptr, 16);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return 0;
  }

 private:
  pid_t pid_ = -1;
  int write_end_ = -1;
};

std::vector<std::string> functions(const Thread& thread) {
  std::vector<std::string> out;
  for (const Frame& frame : thread.frames) out.push_back(frame.function);
  return out;
}

std::vector<uint64_t> addresses(const Thread& thread) {
  std::vector<uint64_t> out;
  for (const Frame& frame : thread.frames) out.push_back(frame.address);
  return out;
}

char thread_state(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(in, text);
  const size_t close = text.rfind(')');
  return close == std::string::npos || close + 2 >= text.size() ? '?' : text[close + 2];
}

}  // namespace

TEST_CASE("native unwind: a live child's chain of calls, then the same from its core") {
  BlockedChild child;
  const uint64_t pc = child.blocked_pc();
  REQUIRE(pc != 0);

  ReadOptions options;
  options.native_all = true;
  auto modules = read_proc_maps(child.pid());
  REQUIRE(modules);
  ProcessMemory memory(child.pid(), false);
  native::NativeReader reader(memory, *modules, proc_root_resolver(child.pid()), options);
  std::vector<native::RawStack> stacks;
  {
    auto lock = ThreadLock::acquire(child.pid(), "--native");
    REQUIRE(lock);
    stacks = reader.unwind_stopped_threads(lock->thread_ids());
  }
  Process live;
  reader.merge(live, stacks);
  REQUIRE(live.threads.size() == 1);
  const Thread& thread = live.threads[0];
  CHECK(thread.native_id == child.pid());
  CHECK(thread.native_note.empty());  // complete: from read() down to _start
  REQUIRE(thread.frames.size() >= 7);
  CHECK(thread.frames[0].address == pc);
  CHECK(thread.frames[0].module.find("libc.so") != std::string::npos);
  const std::vector<std::string> names = functions(thread);
  const std::string descend = "native_test::descend(int, int)";
  auto first = std::find(names.begin(), names.end(), descend);
  REQUIRE(first != names.end());
  REQUIRE(names.end() - first >= 6);
  CHECK(std::vector<std::string>(first, first + 6) ==
        std::vector<std::string>{descend, descend, descend, descend, descend, "native_test::child_main(int)"});
  CHECK(names.back() == "_start");

  // Released: the child runs on (back asleep in read, not stopped, not traced). A stopped child
  // stays 't'/'T'; a released one is back in 'S' once the machine runs it: polled until then.
  const auto asleep_by = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (thread_state(child.pid()) != 'S' && std::chrono::steady_clock::now() < asleep_by) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(thread_state(child.pid()) == 'S');

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // A sanitizer build's child carries terabytes of shadow mappings: gcore takes minutes and
  // writes a core that is mostly shadow. The core half runs in the plain build (CI's tests stage).
  MESSAGE("sanitizer build: the core half is left to the plain build");
  return;
#endif
  core_test::TempDir dir;
  const std::string prefix = dir.file("core");
  int dumped_rc = test_support::run_program({"gcore", "-o", prefix, std::to_string(child.pid())});
  if (dumped_rc == -1) {
    MESSAGE("gcore not installed: the core half is skipped");
    return;
  }
  REQUIRE(dumped_rc == 0);
  auto core = Core::open(prefix + "." + std::to_string(child.pid()));
  REQUIRE(core);
  native::NativeReader core_reader((*core)->memory(), (*core)->modules(), (*core)->resolver(), options);
  Process dumped;
  core_reader.merge(dumped, core_reader.unwind_core_threads((*core)->info().threads));
  REQUIRE(dumped.threads.size() == 1);
  CHECK(dumped.threads[0].native_note.empty());
  CHECK(addresses(dumped.threads[0]) == addresses(thread));
  CHECK(functions(dumped.threads[0]) == names);
}
