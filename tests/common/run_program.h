// Runs a program with an argument list, never through a shell (a path with a quote or a
// space in it stays one argument; tests/system/faults/security_scan.py forbids system() and popen()).
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

extern char** environ;

namespace test_support {

// Exit status of `argv` (searched in PATH), -1 when it could not be started. Its stdout goes
// to `out` when given (else it is discarded, like its stderr).
inline int run_program(const std::vector<std::string>& argv, std::string* out = nullptr) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int pipe_fds[2] = {-1, -1};
  if (out != nullptr && ::pipe2(pipe_fds, O_CLOEXEC) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  if (out != nullptr) {
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  } else {
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  }
  pid_t pid = -1;
  int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (out != nullptr) {
    ::close(pipe_fds[1]);
    char buffer[4096];
    ssize_t n;
    while (spawned == 0 && (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0) out->append(buffer, static_cast<size_t>(n));
    ::close(pipe_fds[0]);
  }
  if (spawned != 0) return -1;
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace test_support
