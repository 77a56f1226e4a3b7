// Test helper: runs an interpreter on a script, reads the first line it prints (with a
// deadline), and kills it when the test is done. Also lists the interpreters tests run on.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

extern char** environ;

namespace test_support {

// Every pyenv CPython 3 plus Debian's static python3.11, those present on this machine; the
// environment variable HANGSHIM_TEST_PYTHONS (paths separated by ':' or ';') replaces the list,
// e.g. to add a locally built interpreter.
inline std::vector<std::string> test_pythons() {
  std::vector<std::string> out;
  if (const char* listed = std::getenv("HANGSHIM_TEST_PYTHONS"); listed != nullptr && *listed != '\0') {
    std::string text(listed);
    size_t start = 0;
    while (start <= text.size()) {
      size_t end = text.find_first_of(":;", start);
      if (end == std::string::npos) end = text.size();
      if (end > start) out.push_back(text.substr(start, end - start));
      start = end + 1;
    }
    return out;
  }
  std::error_code ec;
  std::vector<std::filesystem::path> versions;
  for (const auto& entry : std::filesystem::directory_iterator(HANGSHIM_PYENV_VERSIONS, ec)) {
    if (entry.path().filename().string().rfind("3.", 0) == 0) versions.push_back(entry.path());
  }
  std::sort(versions.begin(), versions.end(), [](const auto& a, const auto& b) {
    auto minor = [](const std::filesystem::path& p) { return std::stoi(p.filename().string().substr(2)); };
    return minor(a) < minor(b);
  });
  for (const auto& v : versions) {
    if (std::filesystem::exists(v / "bin/python3")) out.push_back((v / "bin/python3").string());
  }
  if (std::filesystem::exists("/usr/bin/python3.11")) out.push_back("/usr/bin/python3.11");
  return out;
}

// "3.11.7" for PYENV_ROOT/versions/3.11.7/bin/python3 (or its lib/...), empty otherwise.
inline std::string pyenv_version_of(const std::string& path) {
  const std::string marker = "/versions/";
  size_t at = path.find(marker);
  if (at == std::string::npos) return {};
  at += marker.size();
  size_t end = path.find('/', at);
  return end == std::string::npos ? std::string() : path.substr(at, end - at);
}

class PythonProcess {
 public:
  // stdout is read by read_line; stderr goes to /dev/null, or into the same pipe with
  // `merge_stderr` (for checkers whose tracebacks a failing test should show).
  // `extra_env` entries ("NAME=value") are added to this process's environment.
  PythonProcess(const std::string& python, const std::vector<std::string>& args, bool merge_stderr = false,
                const std::vector<std::string>& extra_env = {}) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return;
    std::vector<std::string> all{python};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_strings(extra_env);
    for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
    std::vector<char*> envp;
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ == 0) {
      // The target dies with the test process, even when that one is killed (a test binary
      // whose output pipe closes must not leave parked interpreters behind).
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);
      ::dup2(fds[1], 1);
      ::dup2(merge_stderr ? fds[1] : devnull, 2);
      ::execve(python.c_str(), argv.data(), envp.data());
      ::_exit(127);
    }
    if (devnull >= 0) ::close(devnull);
    ::close(fds[1]);
    out_ = fds[0];
  }
  ~PythonProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0) ::close(out_);
  }
  PythonProcess(const PythonProcess&) = delete;
  PythonProcess& operator=(const PythonProcess&) = delete;

  pid_t pid() const { return pid_; }

  // The first line of output, nullopt when none arrives within `timeout`.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string line;
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd p{out_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char c;
      ssize_t n = ::read(out_, &c, 1);
      if (n <= 0) return std::nullopt;
      if (c == '\n') return line;
      line += c;
    }
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
};

}  // namespace test_support
