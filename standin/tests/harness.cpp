#include "harness.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <thread>

namespace fakenccl_test {
namespace {

void apply_env(const std::vector<std::string>& env) {
  for (const std::string& kv : env) {
    const auto eq = kv.find('=');
    setenv(kv.substr(0, eq).c_str(), kv.substr(eq + 1).c_str(), 1);
  }
}

char proc_state(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() ? line[close + 2] : '?';
}

// Progress of the ranks of run_ranks_until_asleep, in memory shared with the forked ranks.
constexpr int kMaxTrackedRanks = 64;
std::atomic<int>* g_progress = nullptr;
int g_rank = -1;

std::atomic<int>* progress_table() {
  if (g_progress == nullptr) {
    void* p = mmap(nullptr, sizeof(std::atomic<int>) * kMaxTrackedRanks, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) std::abort();
    g_progress = static_cast<std::atomic<int>*>(p);
  }
  return g_progress;
}

char thread_state(pid_t pid, pid_t tid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() ? line[close + 2] : '?';
}

std::vector<RankResult> collect(const std::vector<pid_t>& pids, std::chrono::milliseconds limit) {
  std::vector<RankResult> results(pids.size());
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::size_t remaining = pids.size();
  // At least one pass, so ranks that already exited are seen as exited even with no time left.
  for (bool first = true; remaining > 0 && (first || std::chrono::steady_clock::now() < deadline); first = false) {
    for (std::size_t i = 0; i < pids.size(); ++i) {
      if (results[i].exited) continue;
      int status = 0;
      if (waitpid(pids[i], &status, WNOHANG) == pids[i]) {
        results[i].exited = true;
        results[i].code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        --remaining;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (std::size_t i = 0; i < pids.size(); ++i) {
    if (results[i].exited) continue;
    results[i].state = proc_state(pids[i]);
    kill(pids[i], SIGKILL);
    waitpid(pids[i], nullptr, 0);
  }
  return results;
}

// Forks the ranks, all given one fresh unique id; each sets `env`, remembers its rank (for
// reached()) and runs `body`. Empty when no unique id could be made.
std::vector<pid_t> fork_ranks(int nranks, const RankBody& body, const std::vector<std::string>& env) {
  ncclUniqueId id;
  if (ncclGetUniqueId(&id) != ncclSuccess) return {};
  std::fflush(nullptr);
  std::vector<pid_t> pids;
  for (int rank = 0; rank < nranks; ++rank) {
    const pid_t pid = fork();
    if (pid == 0) {
      apply_env(env);
      g_rank = rank;
      const int code = body(rank, id);
      std::fflush(nullptr);
      _exit(code);
    }
    pids.push_back(pid);
  }
  return pids;
}

}  // namespace

std::vector<RankResult> run_ranks(int nranks, const RankBody& body, std::chrono::milliseconds limit,
                                  const std::vector<std::string>& env) {
  const std::vector<pid_t> pids = fork_ranks(nranks, body, env);
  if (pids.empty()) return {};
  return collect(pids, limit);
}

void reached(int step) {
  if (g_progress != nullptr && g_rank >= 0 && g_rank < kMaxTrackedRanks) g_progress[g_rank].store(step);
}

std::vector<RankResult> run_ranks_until_asleep(int nranks, const RankBody& body, int step, const std::vector<int>& asleep,
                                               std::chrono::milliseconds limit) {
  std::atomic<int>* progress = progress_table();
  for (int i = 0; i < kMaxTrackedRanks; ++i) progress[i].store(0);
  const std::vector<pid_t> pids = fork_ranks(nranks, body, {});
  if (pids.empty()) return {};
  const auto all_asleep = [&] {
    for (int r : asleep) {
      if (progress[r].load() < step || proc_state(pids[static_cast<std::size_t>(r)]) != 'S') return false;
    }
    return true;
  };
  const auto deadline = std::chrono::steady_clock::now() + limit;
  // Twice in a row, 20 ms apart: a rank passing through a short sleep on its way is not "asleep".
  int seen = 0;
  while (seen < 2 && std::chrono::steady_clock::now() < deadline) {
    seen = all_asleep() ? seen + 1 : 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return collect(pids, std::chrono::milliseconds(0));
}

void wait_until_thread_asleep(pid_t tid) {
  while (thread_state(getpid(), tid) != 'S') std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

RankResult run_process(const std::function<int()>& body, std::chrono::milliseconds limit,
                       const std::vector<std::string>& env) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    apply_env(env);
    const int code = body();
    std::fflush(nullptr);
    _exit(code);
  }
  return collect({pid}, limit).front();
}

bool expect(bool ok, int rank, const std::string& what) {
  if (!ok) std::fprintf(stderr, "rank %d: FAILED: %s\n", rank, what.c_str());
  return ok;
}

bool expect_ok(ncclResult_t r, int rank, const std::string& call) {
  if (r == ncclSuccess) return true;
  std::fprintf(stderr, "rank %d: %s returned %d (%s): %s\n", rank, call.c_str(), static_cast<int>(r),
               ncclGetErrorString(r), ncclGetLastError(nullptr));
  return false;
}

std::string describe(const std::vector<RankResult>& results) {
  std::string out;
  for (std::size_t i = 0; i < results.size(); ++i) {
    out += "rank " + std::to_string(i) + ": ";
    out += results[i].exited ? "exit " + std::to_string(results[i].code)
                             : std::string("still running (state ") + results[i].state + ")";
    out += "; ";
  }
  return out;
}

bool all_succeeded(const std::vector<RankResult>& results) {
  if (results.empty()) return false;
  for (const RankResult& r : results) {
    if (!r.exited || r.code != 0) return false;
  }
  return true;
}

}  // namespace fakenccl_test
