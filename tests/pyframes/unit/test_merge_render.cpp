#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "mini_json.h"
#include "model_samples.h"
#include "pyframes/merge.h"

using namespace pyframes;

namespace {

std::vector<Process> job(int ranks, int outlier) {
  std::vector<Process> processes;
  for (int rank = 0; rank < ranks; ++rank) {
    Process process;
    process.pid = 500 + rank;
    process.source = "dump.json";
    process.rank = std::to_string(rank);
    Thread thread;
    thread.native_id = process.pid;
    thread.name = "MainThread";
    thread.state = rank == outlier ? ThreadState::Running : ThreadState::Idle;
    thread.gil = rank == outlier;
    thread.frames = {samples::python_frame(rank == outlier ? "load" : "all_reduce", "/job/train.py",
                                           rank == outlier ? 21 : 18),
                     samples::python_frame("main", "/job/train.py", 40)};
    thread.frames[0].locals = {Local{"step", rank == outlier ? "1004" : "1005", false}};
    process.threads.push_back(thread);
    processes.push_back(process);
  }
  return processes;
}

size_t position(const std::string& text, const std::string& part) {
  const size_t at = text.find(part);
  INFO("looking for: " << part << "\nin:\n" << text);
  CHECK(at != std::string::npos);
  return at;
}

}  // namespace

TEST_CASE("merged text: summary and tree name the outlier first, with its state and locals") {
  const auto processes = job(8, 7);
  const MergedStacks merged = merge_stacks(processes);
  const std::string text = render_merged_text(merged, TextOptions{}, nullptr);
  position(text, "8 processes (ranks 0-7): main threads merged, outermost frame first\n");
  position(text, "2 distinct stacks:\n");
  const size_t summary_outlier = position(text, "  rank 7     load (/job/train.py:21)  [running, holds the GIL]\n");
  const size_t summary_rest = position(text, "  ranks 0-6  all_reduce (/job/train.py:18)  [idle]\n");
  CHECK(summary_outlier < summary_rest);
  position(text, "\nranks 0-7:\n    main (/job/train.py:40)\n");
  const size_t outlier = position(text, "├─ rank 7 (running, holds the GIL):\n│      load (/job/train.py:21)\n");
  const size_t rest = position(text, "└─ ranks 0-6 (idle):\n       all_reduce (/job/train.py:18)\n");
  CHECK(outlier < rest);
  position(text, "│          step = 1004\n");
  position(text, "           step = 1005\n");
  CHECK(text.find('\x1b') == std::string::npos);
}

TEST_CASE("merged text: a variable that differs within a branch lists each value with its ranks") {
  auto processes = job(4, -1);
  processes[2].threads[0].frames[0].locals[0].repr = "1004";
  const std::string text = render_merged_text(merge_stacks(processes), TextOptions{}, nullptr);
  position(text, "        step = 1004 (rank 2) | 1005 (ranks 0-1,3)\n");
}

TEST_CASE("merged text: target-controlled names cannot inject terminal escapes") {
  auto processes = job(2, 1);
  processes[0].rank = "0\x1b[2J";
  processes[1].threads[0].frames[0].function = "evil\x1b]0;title\x07";
  const std::string text = render_merged_text(merge_stacks(processes), TextOptions{}, nullptr);
  CHECK(text.find('\x1b') == std::string::npos);
  CHECK(text.find('\x07') == std::string::npos);
}

TEST_CASE("merged JSON: members, tree and labels, processes only when asked") {
  const auto processes = job(8, 3);
  const MergedStacks merged = merge_stacks(processes);
  const auto doc = mini_json::parse(render_merged_json(processes, merged, {}, true));
  REQUIRE(doc["processes"].array().size() == 8);
  const auto& tree = doc["merged"];
  CHECK(tree["threads"].str() == "main");
  CHECK(tree["frame_order"].str() == "outermost_first");
  CHECK(tree["processes"].number() == 8);
  REQUIRE(tree["members"].array().size() == 8);
  CHECK(tree["members"][3]["rank"].str() == "3");
  CHECK(tree["members"][3]["state"].str() == "running");
  CHECK(tree["members"][3]["gil"].boolean());
  REQUIRE(tree["tree"].array().size() == 1);
  const auto& root = tree["tree"][0];
  CHECK(root["label"].str() == "ranks 0-7");
  CHECK(root["frames"][0]["function"].str() == "main");
  REQUIRE(root["children"].array().size() == 2);
  const auto& outlier = root["children"][0];
  CHECK(outlier["label"].str() == "rank 3");
  REQUIRE(outlier["members"].array().size() == 1);
  CHECK(outlier["members"][0].number() == 3);
  CHECK(outlier["ended"][0].number() == 3);
  CHECK(outlier["frames"][0]["line"].number() == 21);
  CHECK(outlier["frames"][0]["locals"][0]["values"][0]["repr"].str() == "1004");
  CHECK(outlier["frames"][0]["locals"][0]["values"][0]["label"].str() == "rank 3");

  const auto without = mini_json::parse(render_merged_json(processes, merged, {}, false));
  CHECK_FALSE(without.has("processes"));
  CHECK_FALSE(without.has("errors"));
  FailedTarget failure{9, "process 9", make_error(ErrorKind::NotFound, "no process 9")};
  const auto with_error = mini_json::parse(render_merged_json(processes, merged, {failure}, false));
  CHECK(with_error["errors"][0]["kind"].str() == "not_found");
}

TEST_CASE("merged text: the summary says where each stack parts from the others and where it ends") {
  auto processes = job(3, 2);
  for (Process& process : processes) {
    std::vector<Frame> frames = {samples::python_frame("wait", "/usr/lib/python3.11/threading.py", 327)};
    for (const Frame& frame : process.threads[0].frames) frames.push_back(frame);
    process.threads[0].frames = std::move(frames);
  }
  const std::string text = render_merged_text(merge_stacks(processes), TextOptions{}, nullptr);
  position(text, "  rank 2     load (/job/train.py:21) → wait (/usr/lib/python3.11/threading.py:327)  [");
  position(text, "  ranks 0-1  all_reduce (/job/train.py:18) → wait (/usr/lib/python3.11/threading.py:327)  [");
}

TEST_CASE("merged text: a variable with a different value on every rank shows a few of them") {
  auto processes = job(8, -1);
  for (size_t i = 0; i < processes.size(); ++i) processes[i].threads[0].frames[0].locals[0].repr = std::to_string(i);
  const std::string text = render_merged_text(merge_stacks(processes), TextOptions{}, nullptr);
  position(text, "        step = 0 (rank 0) | 1 (rank 1) | 2 (rank 2) | ... (8 values, one each)\n");
  auto seven = job(8, -1);
  for (size_t i = 0; i < seven.size(); ++i) seven[i].threads[0].frames[0].locals[0].repr = std::to_string(i / 2 * 2);
  const std::string pairs = render_merged_text(merge_stacks(seven), TextOptions{}, nullptr);
  position(pairs, "        step = 0 (ranks 0-1) | 2 (ranks 2-3) | 4 (ranks 4-5) | 6 (ranks 6-7)\n");
}
