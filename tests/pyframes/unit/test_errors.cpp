// Every way read_process can fail says what failed, with the right kind (which the CLI turns
// into its exit code and hint): no such process, not Python, an unsupported Python, a process
// that has exited, and a process we may not read.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "process/proc_info.h"
#include "pyframes/pyframes.h"
#include "python_process.h"

using namespace pyframes;
using test_support::PythonProcess;

TEST_CASE("no such process") {
  pid_t pid = 4194000;
  while (pid > 1000 && ::kill(pid, 0) == 0) --pid;
  auto result = read_process(pid);
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().kind == ErrorKind::NotFound);
  CHECK(result.error().message.find(std::to_string(pid)) != std::string::npos);
  CHECK(read_process(-5).error().kind == ErrorKind::Usage);
}

TEST_CASE("a process that is not Python is named in the error") {
  PythonProcess sleeper("/bin/sleep", {"30"});
  REQUIRE(sleeper.pid() > 0);
  // Wait for exec to replace the spawned image: /proc/PID/exe and the mappings both show
  // sleep (on a loaded machine exec can take well over a second).
  const std::string proc = "/proc/" + std::to_string(sleeper.pid());
  for (int i = 0; i < 2000; ++i) {
    std::error_code ec;
    const std::string text = read_proc_text(proc + "/maps").value_or("");
    if (std::filesystem::read_symlink(proc + "/exe", ec).filename() == "sleep" && text.find("/sleep") != std::string::npos) break;
    usleep(5000);
  }
  auto result = read_process(sleeper.pid());
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().kind == ErrorKind::NotPython);
  CHECK(result.error().message.find("sleep") != std::string::npos);
  CHECK_FALSE(result.error().hint.empty());
}

TEST_CASE("Python 2 is refused with its version") {
  const char* python2 = HANGSHIM_PYENV_VERSIONS "/2.7.18/bin/python2.7";
  if (!std::filesystem::exists(python2)) {
    MESSAGE("no Python 2.7: skipped");
    return;
  }
  PythonProcess target(python2, {"-c", "import sys, time; sys.stdout.write('ready\\n'); sys.stdout.flush(); time.sleep(30)"});
  REQUIRE(target.read_line(std::chrono::seconds(30)).has_value());
  auto result = read_process(target.pid());
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().kind == ErrorKind::UnsupportedVersion);
  CHECK(result.error().message.find("2.7") != std::string::npos);
}

TEST_CASE("a process that has exited") {
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) ::_exit(0);
  // Not reaped yet: a zombie, with no memory left to read. Polled until the exit is complete;
  // the deadline only ends a run where it never is.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    auto result = read_process(child);
    if (!result.ok() && result.error().kind == ErrorKind::ProcessGone) break;
    usleep(5000);
  }
  auto result = read_process(child);
  ::waitpid(child, nullptr, 0);
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().kind == ErrorKind::ProcessGone);
}

TEST_CASE("permission denied carries the fix in its hint") {
  if (::geteuid() != 0) {
    MESSAGE("needs root to read as another user: skipped");
    return;
  }
  auto pythons = test_support::test_pythons();
  if (pythons.empty()) {
    MESSAGE("no CPython interpreters found: skipped");
    return;
  }
  PythonProcess target(pythons.back(), {"-c", "import sys, time; print('ready', flush=True); time.sleep(30)"});
  REQUIRE(target.read_line(std::chrono::seconds(30)).has_value());
  pid_t reader = ::fork();
  REQUIRE(reader >= 0);
  if (reader == 0) {
    // As nobody, root's process is off limits: the error must say so and how to fix it.
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(10);
    auto result = read_process(target.pid());
    if (result.ok()) ::_exit(11);
    if (result.error().kind != ErrorKind::PermissionDenied) ::_exit(12);
    if (result.error().hint.find("CAP_SYS_PTRACE") == std::string::npos) ::_exit(13);
    ReadOptions lock;
    lock.lock = true;
    auto locked = read_process(target.pid(), lock);
    ::_exit(!locked.ok() && locked.error().kind == ErrorKind::PermissionDenied ? 0 : 14);
  }
  int status = 0;
  REQUIRE(::waitpid(reader, &status, 0) == reader);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
