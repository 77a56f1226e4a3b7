// A communicator init that returned an error is the verdict (Kind::InitFailed): the failing
// ranks, the call, NCCL's error name and its ncclGetLastError text, grouped by error; the ranks
// waiting in init for them; advice per error.
#include <doctest/doctest.h>

#include <initializer_list>
#include <string>

#include "report_test_util.h"

using namespace report_test;
using hangshim::ledger::CommState;

namespace {

// Rank `rank`'s init of the world: failed with `result` and `text`, or still inside it.
void init_call(synth::Rank& r, int32_t result, const std::string& text) {
  synth::Call c;
  c.op = Op::CommInitRank;
  c.site = 0;
  c.dtype = 255;
  c.count = static_cast<uint64_t>(r.world_size);
  c.peer = r.rank;
  c.red_op = -1;
  c.complete = false;
  c.result = result;
  c.error_text = text;
  r.calls.push_back(c);
  r.comms[0].state = result != 0 ? CommState::Failed : CommState::Initializing;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Checks that `text` contains each of `parts`; a missing one is reported with the text.
void check_contains_all(const std::string& text, std::initializer_list<std::string> parts) {
  INFO(text);
  for (const std::string& part : parts) CHECK_MESSAGE(contains(text, part), "missing: ", part);
}

std::string all_hints(const Diagnosis& d) {
  std::string out;
  for (const auto& h : d.hints) out += h + "\n";
  return out;
}

}  // namespace

TEST_CASE("report init failed: one rank's init error is the verdict, with NCCL's words") {
  const std::string text = "Cuda failure 'CUDA driver version is insufficient for CUDA runtime version'";
  Job job(3);
  init_call(job[0], 0, "");
  init_call(job[1], 1, text);
  init_call(job[2], 0, "");
  Diagnosis d = job.diagnose();
  REQUIRE(d.problem);
  CHECK(d.verdict == Kind::InitFailed);
  CHECK(std::string(kind_name(d.verdict)) == "init_failed");
  const Finding& f = verdict_of(d);
  CHECK(f.culprits == std::vector<int>{1});
  CHECK(f.waiting == std::vector<int>{0, 2});
  REQUIRE(f.failures.size() == 1);
  CHECK(f.failures[0].call == "ncclCommInitRank");
  CHECK(f.failures[0].error == "ncclUnhandledCudaError");
  CHECK(f.failures[0].result == 1);
  CHECK(f.failures[0].text == text);
  check_contains_all(verdict_line(d), {"INIT FAILED", "rank 1", "ncclUnhandledCudaError", text});
  check_contains_all(all_hints(d), {"nvidia-smi", "CUDA_VISIBLE_DEVICES", "NCCL_DEBUG=INFO"});
}

TEST_CASE("report init failed: different errors on different ranks are grouped") {
  Job job(4);
  init_call(job[0], 1, "Cuda failure 'no CUDA-capable device is detected'");
  init_call(job[1], 2, "socket connect failed");
  init_call(job[2], 1, "Cuda failure 'no CUDA-capable device is detected'");
  init_call(job[3], 0, "");
  Diagnosis d = job.diagnose();
  CHECK(d.verdict == Kind::InitFailed);
  const Finding& f = verdict_of(d);
  CHECK(f.culprits == std::vector<int>{0, 1, 2});
  CHECK(f.waiting == std::vector<int>{3});
  REQUIRE(f.failures.size() == 2);
  std::vector<std::vector<int>> groups{f.failures[0].ranks, f.failures[1].ranks};
  CHECK(std::count(groups.begin(), groups.end(), std::vector<int>{0, 2}) == 1);
  CHECK(std::count(groups.begin(), groups.end(), std::vector<int>{1}) == 1);
  check_contains_all(verdict_line(d), {"ncclUnhandledCudaError", "ncclSystemError"});
  check_contains_all(all_hints(d), {"NCCL_SOCKET_IFNAME", "nvidia-smi"});
}

TEST_CASE("report init failed: a failure without recorded text still names the error") {
  Job job(2);
  init_call(job[0], 5, "");
  init_call(job[1], 5, "");
  Diagnosis d = job.diagnose();
  CHECK(d.verdict == Kind::InitFailed);
  const Finding& f = verdict_of(d);
  REQUIRE(f.failures.size() == 1);
  CHECK(f.failures[0].error == "ncclInvalidUsage");
  CHECK(contains(verdict_line(d), "no ncclGetLastError text recorded"));
  CHECK(contains(all_hints(d), "unique id"));
}

TEST_CASE("report init failed: ranks only waiting in init are not an init failure") {
  Job job(2);
  init_call(job[0], 0, "");
  init_call(job[1], 0, "");
  Diagnosis d = job.diagnose();
  CHECK(d.verdict != Kind::InitFailed);
}
