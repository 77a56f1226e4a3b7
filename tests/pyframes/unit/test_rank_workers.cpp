// Ranks and their workers (process/rank_workers.h): a DataLoader worker inherits RANK from its
// rank and must be named as that rank's worker, with its pid, not as a second copy of the rank.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "pyframes/rank_workers.h"
#include "pyframes/merge.h"

using namespace pyframes;

namespace {

constexpr const char* kPython = "/usr/bin/python3.11";

Process process(int64_t pid, int64_t ppid, std::string rank, std::string executable = kPython) {
  Process p;
  p.pid = pid;
  p.ppid = ppid;
  p.rank = std::move(rank);
  p.local_rank = p.rank;
  p.executable = std::move(executable);
  Thread main;
  main.native_id = pid;
  main.frames.push_back(Frame{});
  main.frames.back().function = "main";
  p.threads.push_back(main);
  return p;
}

// The document without its layout (spaces, newlines), for finding "key":value.
std::string compact(std::string json) {
  std::erase_if(json, [](char c) { return c == ' ' || c == '\n'; });
  return json;
}

std::vector<uint32_t> everyone(const MergedStacks& merged) {
  std::vector<uint32_t> ids(merged.members.size());
  for (uint32_t i = 0; i < ids.size(); ++i) ids[i] = i;
  return ids;
}

}  // namespace

TEST_CASE("rank workers: the outermost ancestor with the same RANK owns the process") {
  // torchrun (100, no RANK) -> rank 1 (200) -> forkserver (300) -> worker (400)
  std::map<int64_t, RankIdentity> table = {
      {100, {1, "", "", kPython}},
      {200, {100, "1", "1", kPython}},
      {300, {200, "1", "1", kPython}},
  };
  auto lookup = [&](int64_t pid) -> std::optional<RankIdentity> {
    auto found = table.find(pid);
    if (found == table.end()) return std::nullopt;
    return found->second;
  };
  CHECK(rank_owner({100, "1", "1", kPython}, lookup) == 0);  // the rank itself: its parent has no RANK
  CHECK(rank_owner({200, "1", "1", kPython}, lookup) == 200);
  CHECK(rank_owner({300, "1", "1", kPython}, lookup) == 200);
  CHECK(rank_owner({300, "", "", kPython}, lookup) == 0);      // no RANK: not a rank's worker
  CHECK(rank_owner({200, "0", "0", kPython}, lookup) == 0);    // another rank's child keeps its RANK
  CHECK(rank_owner({200, "1", "1", "/bin/bash"}, lookup) == 0);  // a wrapper is not a worker
  CHECK(rank_owner({999, "1", "1", kPython}, lookup) == 0);    // unknown parent
  table[500] = {500, "1", "1", kPython};                       // a table that loops ends the walk
  CHECK(rank_owner({500, "1", "1", kPython}, lookup) == 500);
}

TEST_CASE("rank workers: marked among the processes read, then named apart in the merged labels") {
  std::vector<Process> processes = {process(200, 100, "0"), process(201, 100, "1"), process(300, 201, "1"),
                                    process(301, 200, "0"), process(400, 1, "")};
  mark_rank_workers(processes);
  CHECK(processes[0].worker_of == 0);
  CHECK(processes[1].worker_of == 0);
  CHECK(processes[2].worker_of == 201);
  CHECK(processes[3].worker_of == 200);
  CHECK(processes[4].worker_of == 0);

  const MergedStacks merged = merge_stacks(processes);
  CHECK(describe_members(merged, everyone(merged)) == "ranks 0-1, ranks 0-1 workers pids 300-301, pid 400");
  std::vector<uint32_t> rank1;
  std::vector<uint32_t> worker1;
  for (uint32_t i = 0; i < merged.members.size(); ++i) {
    if (merged.members[i].pid == 201) rank1.push_back(i);
    if (merged.members[i].pid == 300) {
      worker1.push_back(i);
      CHECK(merged.members[i].worker_of == 201);
    }
  }
  CHECK(describe_members(merged, worker1) == "rank 1 worker pid 300");
  rank1.insert(rank1.end(), worker1.begin(), worker1.end());
  CHECK(describe_members(merged, rank1) == "rank 1, rank 1 worker pid 300");  // no "(2 processes)"

  const std::string text = render_merged_text(merged, TextOptions{}, nullptr);
  CHECK(text.find("5 processes (ranks 0-1, ranks 0-1 workers pids 300-301, pid 400)") != std::string::npos);
  const std::string json = compact(render_merged_json(processes, merged, {}, true));
  CHECK(json.find("\"worker_of\":201") != std::string::npos);
}

TEST_CASE("rank workers: the per-process heading names the rank the worker belongs to") {
  Process worker = process(300, 201, "1");
  worker.worker_of = 201;
  const std::string text = render_text(worker, TextOptions{}, nullptr);
  CHECK(text.find("Process 300 (worker of rank 1 pid 201, local rank 1)") != std::string::npos);
  const std::string json = compact(render_json({worker}, {}));
  CHECK(json.find("\"ppid\":201") != std::string::npos);
  CHECK(json.find("\"worker_of\":201") != std::string::npos);
}
