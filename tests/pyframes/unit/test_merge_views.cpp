// The stack views' filters and summary: --hide-idle never hides the thread a process waits in,
// a process with no thread in the view is named, --native-all's threads join the merged view,
// and the summary line names the program's own native frame, not libc's or the interpreter's.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "model_samples.h"
#include "pyframes/merge.h"
#include "pyframes/render.h"

using namespace pyframes;
using samples::native_frame;
using samples::python_frame;

namespace {

constexpr const char* kExe = "/usr/bin/python3.11";

// A hung rank: its main thread idle in a wait, a loader thread idle too.
Process hung_rank(int rank) {
  Process process = samples::two_thread_process(2000 + rank);
  process.rank = std::to_string(rank);
  process.threads[0].state = ThreadState::Idle;
  process.threads[0].gil = false;
  return process;
}

Thread native_only_thread(int64_t tid) {
  Thread thread;
  thread.native_id = tid;
  thread.name = "python3.11";
  thread.state = ThreadState::Idle;
  thread.frames = {native_frame("__futex_abstimed_wait_common", "/usr/lib/x86_64-linux-gnu/libc.so.6", 0x10, 0x85f16),
                   native_frame("pthread_cond_wait", "/usr/lib/x86_64-linux-gnu/libc.so.6", 0x20, 0x885d8),
                   native_frame("block_forever", "/ext/nativeblock.cpython-311-x86_64-linux-gnu.so", 0x30, 0x123b),
                   native_frame("start_thread", "/usr/lib/x86_64-linux-gnu/libc.so.6", 0x40, 0x891f5)};
  return thread;
}

std::vector<const Frame*> pointers(const std::vector<Frame>& frames) {
  std::vector<const Frame*> out;
  for (const Frame& frame : frames) out.push_back(&frame);
  return out;
}

}  // namespace

TEST_CASE("hide idle: the idle main thread stays, the idle loader goes") {
  const Process process = hung_rank(0);
  CHECK(kept_when_hiding_idle(process, 0));
  CHECK_FALSE(kept_when_hiding_idle(process, 1));
  std::vector<Process> processes = {process};
  CHECK(hide_idle_threads(processes) == 1);
  REQUIRE(processes[0].threads.size() == 1);
  CHECK(processes[0].threads[0].name == "MainThread");
}

TEST_CASE("hide idle: the only Python thread and a thread in a collective stay") {
  Process process = hung_rank(0);
  process.threads[0].frames.clear();  // the main thread shows no Python (finalizing, say)
  process.threads[0].native_id = 1;   // ... and is not recognisably the main one
  process.threads[0].name = "x";
  CHECK(kept_when_hiding_idle(process, 1));  // the only thread that runs Python
  process.threads[0].frames = {python_frame("all_reduce", "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", 1320)};
  CHECK(kept_when_hiding_idle(process, 0));  // in a collective
  CHECK(in_collective(process.threads[0]));
  Thread nccl;
  nccl.frames = {native_frame("ncclCommWatchdog", "/usr/lib/libnccl.so.2", 1, 1)};
  CHECK(in_collective(nccl));
  CHECK_FALSE(in_collective(process.threads[1]));
}

TEST_CASE("hide idle in the merged view: every hung rank still shows, nothing is left out") {
  const std::vector<Process> processes = {hung_rank(0), hung_rank(1)};
  MergeOptions options;
  options.hide_idle = true;
  const MergedStacks main_only = merge_stacks(processes, options);
  CHECK(main_only.processes == 2);
  CHECK(main_only.members.size() == 2);
  CHECK(main_only.hidden_idle == 0);
  CHECK(main_only.left_out.empty());
  options.all_threads = true;
  const MergedStacks all = merge_stacks(processes, options);
  CHECK(all.members.size() == 2);
  CHECK(all.hidden_idle == 2);
}

TEST_CASE("merged view: a process with no thread to show is named, in text and JSON") {
  std::vector<Process> processes = {hung_rank(0), hung_rank(1)};
  processes[1].threads.clear();
  const MergedStacks merged = merge_stacks(processes);
  REQUIRE(merged.left_out.size() == 1);
  CHECK(merged.left_out[0].pid == 2001);
  CHECK(merged.left_out[0].rank == "1");
  const std::string text = render_merged_text(merged, TextOptions{}, nullptr);
  CHECK(text.find("left out: pid 2001 (rank 1): no threads read") != std::string::npos);
  const std::string json = render_merged_json(processes, merged, {}, false);
  CHECK(json.find("\"left_out\":[{\"pid\":2001,\"rank\":\"1\",\"reason\":\"no threads read\"}]") != std::string::npos);
}

TEST_CASE("merged view with native_threads: the threads without Python join the main threads") {
  std::vector<Process> processes = {hung_rank(0), hung_rank(1)};
  processes[0].threads.push_back(native_only_thread(5000));
  MergeOptions options;
  CHECK(merge_stacks(processes, options).members.size() == 2);
  options.native_threads = true;
  const MergedStacks merged = merge_stacks(processes, options);
  CHECK(merged.members.size() == 3);
  CHECK(merged.native_only == 1);
  const std::string text = render_merged_text(merged, TextOptions{}, nullptr);
  CHECK(text.find("main threads and 1 thread without Python (--native-all) merged") != std::string::npos);
  CHECK(text.find("rank 0 \"python3.11\"") != std::string::npos);
  CHECK(text.find("[native] block_forever") != std::string::npos);
}

TEST_CASE("native plumbing: by module first, by name when the module is unknown") {
  CHECK(is_native_plumbing(native_frame("__futex_abstimed_wait_common", "/lib/x86_64-linux-gnu/libc.so.6", 1, 1), kExe));
  CHECK(is_native_plumbing(native_frame("pthread_cond_wait", "/lib/x86_64-linux-gnu/libpthread.so.0", 1, 1), kExe));
  CHECK(is_native_plumbing(native_frame("enum_next.lto_priv.0", kExe, 1, 1), kExe));
  CHECK(is_native_plumbing(native_frame("", "/root/.pyenv/versions/3.9.18/lib/libpython3.9.so.1.0", 1, 1), ""));
  CHECK(is_native_plumbing(native_frame("_dl_start", "/lib64/ld-linux-x86-64.so.2", 1, 1), kExe));
  CHECK(is_native_plumbing(native_frame("time_sleep", "/usr/local/bin/python3.12", 1, 1), kExe));  // any python*
  CHECK_FALSE(is_native_plumbing(native_frame("c10d::Reducer::finalize_backward()", "/torch/lib/libtorch_cpu.so", 1, 1), kExe));
  CHECK_FALSE(is_native_plumbing(native_frame("block_forever", "/ext/nativeblock.cpython-311-x86_64-linux-gnu.so", 1, 1), kExe));
  CHECK_FALSE(is_native_plumbing(native_frame("pthread_cond_wait", "/opt/lib/mylib.so", 1, 1), kExe));  // the module decides
  CHECK(is_native_plumbing(native_frame("pthread_cond_wait", "", 1, 1), kExe));  // no module: the name
  CHECK(is_native_plumbing(native_frame("_PyEval_EvalFrameDefault", "", 1, 1), kExe));
  CHECK_FALSE(is_native_plumbing(native_frame("ncclAllReduce", "", 1, 1), kExe));
  CHECK_FALSE(is_native_plumbing(python_frame("__enter__", "/x.py", 3), kExe));
}

TEST_CASE("summary frames: the innermost Python frame and the program's own native frame inside it") {
  const std::vector<Frame> extension = {
      native_frame("__futex_abstimed_wait_common", "/lib/libc.so.6", 1, 1),
      native_frame("pthread_cond_wait", "/lib/libc.so.6", 1, 1),
      native_frame("c10d::Reducer::finalize_backward()", "/torch/lib/libtorch_cpu.so", 1, 1),
      native_frame("cfunction_vectorcall_NOARGS.lto_priv.0", kExe, 1, 1),
      python_frame("backward", "/job/train.py", 30),
      native_frame("outer_native", "/ext/other.so", 1, 1),
      python_frame("main", "/job/train.py", 50)};
  SummaryFrames names = summary_frames(pointers(extension), kExe);
  REQUIRE(names.python != nullptr);
  CHECK(names.python->function == "backward");
  REQUIRE(names.native != nullptr);
  CHECK(names.native->function == "c10d::Reducer::finalize_backward()");

  const std::vector<Frame> plain_wait = {native_frame("clock_nanosleep", "/lib/libc.so.6", 1, 1),
                                         native_frame("time_sleep", kExe, 1, 1),
                                         native_frame("enum_next.lto_priv.0", kExe, 1, 1),
                                         python_frame("wait", "/job/train.py", 12)};
  names = summary_frames(pointers(plain_wait), kExe);
  CHECK(names.python->function == "wait");
  CHECK(names.native == nullptr);  // nothing but plumbing: the Python frame is the answer

  const Thread native_only = native_only_thread(1);
  names = summary_frames(pointers(native_only.frames), kExe);
  CHECK(names.python == nullptr);
  CHECK(names.native->function == "block_forever");
  const std::vector<Frame> only_libc = {native_frame("epoll_wait", "/lib/libc.so.6", 1, 1)};
  names = summary_frames(pointers(only_libc), kExe);
  CHECK(names.native->function == "epoll_wait");  // nothing else to name
}

TEST_CASE("merged summary line with native frames ends in the program's frame, not in libc") {
  std::vector<Process> processes = {hung_rank(0), hung_rank(1)};
  for (Process& process : processes) {
    auto& frames = process.threads[0].frames;
    frames.insert(frames.begin(), {native_frame("__futex_abstimed_wait_common", "/lib/libc.so.6", 1, 0x85f16),
                                   native_frame("c10d::Reducer::finalize_backward()", "/torch/lib/libtorch_cpu.so", 2, 0x10),
                                   native_frame("enum_next.lto_priv.0", kExe, 3, 0x20)});
  }
  processes[1].threads[0].frames[3].line = 99;  // rank 1 waits at another line
  const std::string text = render_merged_text(merge_stacks(processes), TextOptions{}, nullptr);
  const size_t summary = text.find("2 distinct stacks:\n");
  REQUIRE(summary != std::string::npos);
  const std::string lines = text.substr(summary, text.find("\n\n", summary) - summary);
  CHECK(lines.find("step (/srv/train.py:88) → [native] c10d::Reducer::finalize_backward() (libtorch_cpu.so+0x10)") !=
        std::string::npos);
  CHECK(lines.find("__futex") == std::string::npos);
  CHECK(lines.find("enum_next") == std::string::npos);
}
