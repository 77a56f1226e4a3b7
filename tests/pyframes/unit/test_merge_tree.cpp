#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "model_samples.h"
#include "pyframes/merge.h"

using namespace pyframes;

namespace {

// A rank of a job: main thread in step() at `line`, under main() and <module>.
Process rank_process(int rank, int line, int64_t pid = 0) {
  Process process;
  process.pid = pid != 0 ? pid : 1000 + rank;
  process.source = "pid " + std::to_string(process.pid);
  process.rank = std::to_string(rank);
  Thread thread;
  thread.native_id = process.pid;
  thread.name = "MainThread";
  thread.state = ThreadState::Idle;
  thread.frames = {samples::python_frame("step", "/job/train.py", line),
                   samples::python_frame("main", "/job/train.py", 40),
                   samples::python_frame("<module>", "/job/train.py", 50)};
  process.threads.push_back(thread);
  return process;
}

std::vector<Frame> stack_of(const DistinctStack& stack) {
  std::vector<Frame> frames;  // outermost first
  for (const MergeBranch* branch : stack.path) {
    for (const MergedFrame& frame : branch->frames) frames.push_back(frame.frame);
  }
  return frames;
}

bool same_place(const Frame& a, const Frame& b) {
  return a.function == b.function && a.file == b.file && a.line == b.line && a.kind == b.kind;
}

}  // namespace

TEST_CASE("merge: seven ranks at one line, one at another: the outlier comes first") {
  std::vector<Process> processes;
  for (int rank = 0; rank < 8; ++rank) processes.push_back(rank_process(rank, rank == 5 ? 21 : 18));
  const MergedStacks merged = merge_stacks(processes);
  CHECK(merged.processes == 8);
  REQUIRE(merged.roots.size() == 1);
  const MergeBranch& root = merged.roots.front();
  CHECK(describe_members(merged, root.members) == "ranks 0-7");
  REQUIRE(root.frames.size() == 2);
  CHECK(root.frames[0].frame.function == "<module>");
  CHECK(root.frames[1].frame.function == "main");
  CHECK(root.ended.empty());
  REQUIRE(root.children.size() == 2);
  CHECK(describe_members(merged, root.children[0].members) == "rank 5");
  CHECK(root.children[0].frames.front().frame.line == 21);
  CHECK(describe_members(merged, root.children[1].members) == "ranks 0-4,6-7");
  CHECK(root.children[1].frames.front().frame.line == 18);

  const auto stacks = distinct_stacks(merged);
  REQUIRE(stacks.size() == 2);
  CHECK(describe_members(merged, stacks[0].members) == "rank 5");
  REQUIRE(stacks[0].innermost() != nullptr);
  CHECK(stacks[0].innermost()->line == 21);
}

TEST_CASE("merge: members are ordered by numeric rank, whatever order the processes came in") {
  std::vector<Process> processes;
  for (int rank : {10, 2, 9, 0, 1}) processes.push_back(rank_process(rank, 18));
  const MergedStacks merged = merge_stacks(processes);
  std::vector<std::string> ranks;
  for (const MergeMember& member : merged.members) ranks.push_back(member.rank);
  CHECK(ranks == std::vector<std::string>{"0", "1", "2", "9", "10"});
  CHECK(describe_members(merged, merged.roots.front().members) == "ranks 0-2,9-10");
}

TEST_CASE("merge: processes without RANK are named by pid") {
  std::vector<Process> processes;
  for (int i = 0; i < 3; ++i) {
    Process process = rank_process(i, i == 2 ? 30 : 18, 700 + i);
    process.rank.clear();
    processes.push_back(process);
  }
  const MergedStacks merged = merge_stacks(processes);
  const MergeBranch& root = merged.roots.front();
  CHECK(describe_members(merged, root.members) == "pids 700-702");
  CHECK(describe_members(merged, root.children[0].members) == "pid 702");
}

TEST_CASE("merge: a stack that is a prefix of others ends inside a branch") {
  std::vector<Process> processes = {rank_process(0, 18), rank_process(1, 18), rank_process(2, 18)};
  processes[2].threads[0].frames.erase(processes[2].threads[0].frames.begin());  // rank 2 stops in main()
  const MergedStacks merged = merge_stacks(processes);
  REQUIRE(merged.roots.size() == 1);
  const MergeBranch& root = merged.roots.front();
  CHECK(root.frames.size() == 2);
  REQUIRE(root.ended.size() == 1);
  CHECK(merged.members[root.ended[0]].rank == "2");
  REQUIRE(root.children.size() == 1);
  CHECK(describe_members(merged, root.children[0].members) == "ranks 0-1");
  const auto stacks = distinct_stacks(merged);
  REQUIRE(stacks.size() == 2);
  CHECK(describe_members(merged, stacks[0].members) == "rank 2");
  CHECK(stacks[0].innermost()->function == "main");
}

TEST_CASE("merge: threads without frames form a root of their own") {
  std::vector<Process> processes = {rank_process(0, 18), rank_process(1, 18)};
  processes[1].threads[0].frames.clear();
  const MergedStacks merged = merge_stacks(processes);
  REQUIRE(merged.roots.size() == 2);  // one member each: in rank order
  CHECK(merged.roots[1].frames.empty());
  CHECK(describe_members(merged, merged.roots[1].ended) == "rank 1");
  const auto stacks = distinct_stacks(merged);
  CHECK(stacks[1].innermost() == nullptr);
}

TEST_CASE("merge: the main thread by default, every thread with all_threads, idle threads hidden on request") {
  Process process = samples::two_thread_process(4242);  // main thread holds the GIL, loader idle
  process.rank = "3";
  Process other = samples::two_thread_process(4343);
  other.rank = "4";
  const std::vector<Process> processes = {process, other};

  MergedStacks main_only = merge_stacks(processes);
  CHECK(main_only.members.size() == 2);
  CHECK(main_only.members[0].thread_name == "MainThread");

  MergeOptions all;
  all.all_threads = true;
  MergedStacks everything = merge_stacks(processes, all);
  CHECK(everything.members.size() == 4);
  REQUIRE(everything.roots.size() == 2);  // as many main threads as loaders: the lower member ids first
  CHECK(describe_members(everything, everything.roots[0].members) == "ranks 3-4 \"MainThread\"");
  CHECK(describe_members(everything, everything.roots[1].members) == "ranks 3-4 \"data-loader\"");
  std::vector<uint32_t> all_ids = {0, 1, 2, 3};
  CHECK(describe_members(everything, all_ids) == "ranks 3-4 (4 threads)");

  all.hide_idle = true;
  MergedStacks busy = merge_stacks(processes, all);
  CHECK(busy.members.size() == 2);
  CHECK(busy.hidden_idle == 2);
}

TEST_CASE("merge: the main thread is the one whose id is the pid, wherever it is listed") {
  Process process = samples::two_thread_process(4242);
  std::swap(process.threads[0], process.threads[1]);
  process.threads[1].name = "renamed";
  CHECK(main_thread_index(process) == 1);
  process.threads[1].native_id = 0;
  process.threads[1].name = "MainThread";
  CHECK(main_thread_index(process) == 1);
  process.threads[1].name = "x";
  CHECK(main_thread_index(process) == 0);
  CHECK(main_thread_index(Process{}) == static_cast<size_t>(-1));
}

TEST_CASE("merge: locals are grouped by value, addresses alone do not split ranks") {
  std::vector<Process> processes;
  for (int rank = 0; rank < 4; ++rank) {
    Process process = rank_process(rank, 18);
    Frame& step = process.threads[0].frames[0];
    step.locals = {Local{"i", rank == 3 ? "1004" : "1005", false},
                   Local{"loader", "<DataLoader object at 0x7f00" + std::to_string(rank) + "0>", true},
                   Local{"batch", "[1, 2]", false}};
    processes.push_back(process);
  }
  const MergedStacks merged = merge_stacks(processes);
  const MergedFrame& step = merged.roots.front().frames.back();
  REQUIRE(step.frame.function == "step");
  CHECK(step.frame.locals.empty());
  REQUIRE(step.locals.size() == 3);
  const MergedLocal& i = step.locals[0];
  CHECK(i.name == "i");
  REQUIRE(i.values.size() == 2);
  CHECK(i.values[0].repr == "1004");
  CHECK(describe_members(merged, i.values[0].members) == "rank 3");
  CHECK(i.values[1].repr == "1005");
  CHECK(describe_members(merged, i.values[1].members) == "ranks 0-2");
  const MergedLocal& loader = step.locals[1];
  CHECK(loader.is_argument);
  REQUIRE(loader.values.size() == 1);
  CHECK(loader.values[0].repr == "<DataLoader object>");
  CHECK(loader.values[0].members.size() == 4);
  CHECK(step.locals[2].values.size() == 1);
  CHECK(step.locals[2].values[0].repr == "[1, 2]");
}

TEST_CASE("merge: native frames merge by symbol and module, not by address") {
  std::vector<Process> processes = {rank_process(0, 18), rank_process(1, 18)};
  for (size_t i = 0; i < processes.size(); ++i) {
    Frame native;
    native.kind = Frame::Kind::Native;
    native.function = "ncclAllReduce";
    native.module = "/usr/lib/libnccl.so.2";
    native.address = 0x7f0000001000 + i * 0x1000;
    processes[i].threads[0].frames.insert(processes[i].threads[0].frames.begin(), native);
  }
  const MergedStacks merged = merge_stacks(processes);
  REQUIRE(merged.roots.size() == 1);
  CHECK(merged.roots.front().children.empty());
  CHECK(merged.roots.front().frames.back().frame.function == "ncclAllReduce");
}

TEST_CASE("merge: random stacks: every member is in exactly one distinct stack, which is its own stack") {
  std::mt19937 random(12345);
  for (int round = 0; round < 50; ++round) {
    std::vector<Process> processes;
    const int count = 1 + static_cast<int>(random() % 40);
    for (int rank = 0; rank < count; ++rank) {
      Process process = rank_process(rank, 18);
      std::vector<Frame> frames;
      const int depth = static_cast<int>(random() % 6);
      for (int d = 0; d < depth; ++d) {
        frames.push_back(samples::python_frame("f" + std::to_string(random() % 3), "/a.py",
                                               static_cast<int>(random() % 3) + 1));
      }
      process.threads[0].frames = std::move(frames);
      processes.push_back(process);
    }
    const MergedStacks merged = merge_stacks(processes);
    std::vector<int> seen(merged.members.size(), 0);
    for (const DistinctStack& stack : distinct_stacks(merged)) {
      const std::vector<Frame> frames = stack_of(stack);
      for (uint32_t id : stack.members) {
        ++seen[id];
        const MergeMember& member = merged.members[id];
        const auto& real = processes[member.process].threads[member.thread].frames;
        REQUIRE(real.size() == frames.size());
        for (size_t k = 0; k < frames.size(); ++k) CHECK(same_place(frames[k], real[real.size() - 1 - k]));
      }
    }
    CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
    for (const MergeBranch& root : merged.roots) {  // siblings: fewest members first
      for (size_t k = 1; k < root.children.size(); ++k) {
        CHECK(root.children[k - 1].members.size() <= root.children[k].members.size());
      }
    }
  }
}
