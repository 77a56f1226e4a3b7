// Running test bodies as separate rank processes. Every NCCL call of the tests happens in forked
// children (the stand-in reads its environment once per process, and a hang must not take the
// test runner with it); the parent only collects exit codes, with a time limit.
#pragma once

#include <nccl.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace fakenccl_test {

struct RankResult {
  bool exited = false;  // false: still running at the limit (then killed)
  int code = -1;        // exit code, or 128+signal
  char state = '?';     // /proc state letter when it was still running ('S' = asleep)
};

// The body of one rank: returns 0 on success; anything else is a failure (print why).
using RankBody = std::function<int(int rank, const ncclUniqueId& id)>;

// Forks `nranks` processes running `body`, all given one fresh unique id, each first setting
// `env` (NAME=VALUE). Waits until all exit or `limit` passes; then kills the rest.
std::vector<RankResult> run_ranks(int nranks, const RankBody& body, std::chrono::milliseconds limit,
                                  const std::vector<std::string>& env = {});

// Child side: this rank reached `step` of its body (the parent sees it; see below).
void reached(int step);

// Forks `nranks` ranks as run_ranks does and waits until every rank in `asleep` has reached
// `step` (reached()) and sleeps ('S' in /proc: waiting inside the call that follows the step),
// decided from state, not a time; `limit` is a deadline only a real failure reaches. Then
// kills what still runs. Each result's `state` is the rank's state when it was killed.
std::vector<RankResult> run_ranks_until_asleep(int nranks, const RankBody& body, int step, const std::vector<int>& asleep,
                                               std::chrono::milliseconds limit = std::chrono::seconds(60));

// Child side, in the thread of `tid`'s process: waits until thread `tid` sleeps ('S').
void wait_until_thread_asleep(pid_t tid);

// Runs `body` in one forked process (for single-process tests such as ncclCommInitAll).
RankResult run_process(const std::function<int()>& body, std::chrono::milliseconds limit,
                       const std::vector<std::string>& env = {});

// Child-side check: prints the message with the rank and returns false when `ok` is false.
bool expect(bool ok, int rank, const std::string& what);
// Child-side: an NCCL result that must be ncclSuccess.
bool expect_ok(ncclResult_t r, int rank, const std::string& call);

std::string describe(const std::vector<RankResult>& results);
bool all_succeeded(const std::vector<RankResult>& results);

}  // namespace fakenccl_test
