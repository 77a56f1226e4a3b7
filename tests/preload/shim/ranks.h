// Shared by the shim's test drivers: ranks as forked children of one program, and checked
// NCCL calls.
#pragma once

#include <nccl.h>
#include <errno.h>  // program_invocation_short_name
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

bool check(ncclResult_t r, int rank, const char* what) {
  if (r == ncclSuccess) return true;
  std::fprintf(stderr, "%s rank %d: %s failed: %s\n", program_invocation_short_name, rank, what, ncclGetErrorString(r));
  return false;
}

void set_rank_env(int rank, int nranks) {
  setenv("RANK", std::to_string(rank).c_str(), 1);
  setenv("WORLD_SIZE", std::to_string(nranks).c_str(), 1);
  setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
}

// Forks `nranks` children running body(rank, ids); 0 when all exit 0.
int run_ranks(int nranks, int nids, const std::function<int(int, const std::vector<ncclUniqueId>&)>& body) {
  std::vector<ncclUniqueId> ids(static_cast<size_t>(nids));
  for (auto& id : ids) {
    if (ncclGetUniqueId(&id) != ncclSuccess) return 1;
  }
  std::vector<pid_t> children;
  for (int rank = 0; rank < nranks; ++rank) {
    pid_t pid = fork();
    if (pid == 0) {
      set_rank_env(rank, nranks);
      std::exit(body(rank, ids));  // exit, not _exit: a rank that finishes runs its exit handlers
    }
    children.push_back(pid);
  }
  int failures = 0;
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failures;
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace
