// Merging native stacks into Python threads (native/merge_native.h): every evaluation-loop
// call replaced by its run of Python frames, other native frames kept in order, and no merge
// at all where the counts disagree.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "native/merge_native.h"

using namespace pyframes;
using pyframes::native::NativeStack;

namespace {

Frame python(const std::string& function, bool entry) {
  Frame frame;
  frame.function = frame.qualname = function;
  frame.file = "app.py";
  frame.line = 10;
  frame.is_entry = entry;
  return frame;
}

Frame native_frame(const std::string& function) {
  Frame frame;
  frame.kind = Frame::Kind::Native;
  frame.function = function;
  frame.module = "/usr/lib/libpython3.so";
  return frame;
}

std::vector<std::string> names(const std::vector<Frame>& frames) {
  std::vector<std::string> out;
  for (const Frame& frame : frames) out.push_back((frame.kind == Frame::Kind::Native ? "C:" : "Py:") + frame.function);
  return out;
}

Thread python_thread(int64_t tid, std::vector<Frame> frames) {
  Thread thread;
  thread.native_id = tid;
  thread.frames = std::move(frames);
  return thread;
}

NativeStack native_stack(int64_t tid, const std::vector<std::string>& functions) {
  NativeStack stack;
  stack.tid = tid;
  for (const auto& function : functions) stack.frames.push_back(native_frame(function));
  return stack;
}

}  // namespace

TEST_CASE("native merge: the evaluation loop by name, split parts included") {
  CHECK(native::is_eval_loop_frame(native_frame("_PyEval_EvalFrameDefault")));
  CHECK(native::is_eval_loop_frame(native_frame("_PyEval_EvalFrameDefault.cold")));
  CHECK_FALSE(native::is_eval_loop_frame(native_frame("_PyEval_EvalFrameDefaultX")));
  CHECK_FALSE(native::is_eval_loop_frame(native_frame("_PyEval_EvalFrame")));
  CHECK_FALSE(native::is_eval_loop_frame(native_frame("PyEval_EvalFrameEx")));
  CHECK_FALSE(native::is_eval_loop_frame(python("_PyEval_EvalFrameDefault", true)));
}

TEST_CASE("native merge: one Python frame per evaluation-loop call (3.6-3.10)") {
  Process process;
  process.threads.push_back(python_thread(7, {python("inner", true), python("outer", true)}));
  native::merge_native_stacks(
      process,
      {native_stack(7, {"clock_nanosleep", "time_sleep", "_PyEval_EvalFrameDefault", "function_code_fastcall",
                        "_PyEval_EvalFrameDefault", "main"})},
      false);
  const Thread& thread = process.threads[0];
  CHECK(names(thread.frames) == std::vector<std::string>{"C:clock_nanosleep", "C:time_sleep", "Py:inner",
                                                         "C:function_code_fastcall", "Py:outer", "C:main"});
  CHECK(thread.native_note.empty());
  CHECK(thread.native_frames.empty());
}

TEST_CASE("native merge: a run of Python frames per call, ending at the entry frame (3.11+)") {
  Process process;
  // inner and middle ran in the same C call as outer_entry; cb_entry was called back from C.
  process.threads.push_back(python_thread(
      9, {python("inner", false), python("cb_entry", true), python("middle", false), python("outer_entry", true)}));
  native::merge_native_stacks(process,
                              {native_stack(9, {"pthread_cond_wait", "ext_wait", "_PyEval_EvalFrameDefault",
                                                "_PyObject_Call", "ext_call", "_PyEval_EvalFrameDefault", "_start"})},
                              false);
  CHECK(names(process.threads[0].frames) ==
        std::vector<std::string>{"C:pthread_cond_wait", "C:ext_wait", "Py:inner", "Py:cb_entry", "C:_PyObject_Call",
                                 "C:ext_call", "Py:middle", "Py:outer_entry", "C:_start"});
}

TEST_CASE("native merge: counts that disagree leave both stacks as they are, with a note") {
  Process process;
  const std::vector<Frame> frames = {python("inner", true), python("outer", true)};
  process.threads.push_back(python_thread(3, frames));
  native::merge_native_stacks(process, {native_stack(3, {"read", "_PyEval_EvalFrameDefault", "main"})}, false);
  const Thread& thread = process.threads[0];
  CHECK(names(thread.frames) == names(frames));
  CHECK(names(thread.native_frames) == std::vector<std::string>{"C:read", "C:_PyEval_EvalFrameDefault", "C:main"});
  CHECK(thread.native_note ==
        "native stack not merged: 1 call of the evaluation loop for 2 runs of Python frames");
}

TEST_CASE("native merge: a cut Python stack is never merged") {
  Process process;
  process.threads.push_back(python_thread(3, {python("inner", true)}));
  process.threads[0].truncated = true;
  native::merge_native_stacks(process, {native_stack(3, {"_PyEval_EvalFrameDefault"})}, false);
  CHECK(process.threads[0].frames.size() == 1);
  CHECK(process.threads[0].native_frames.size() == 1);
  CHECK(process.threads[0].native_note.find("Python stack is incomplete") != std::string::npos);
}

TEST_CASE("native merge: a native stack that may be incomplete still merges when every call is there, and says so") {
  Process process;
  process.threads.push_back(python_thread(5, {python("f", true)}));
  NativeStack stack = native_stack(5, {"poll", "_PyEval_EvalFrameDefault"});
  stack.problem = "unwinding stopped at 0x1234: bad frame";
  native::merge_native_stacks(process, {stack}, false);
  CHECK(names(process.threads[0].frames) == std::vector<std::string>{"C:poll", "Py:f"});
  CHECK(process.threads[0].native_note == "native stack may be incomplete: " + stack.problem);
}

TEST_CASE("native merge: a Python thread without Python frames gets its whole native stack") {
  Process process;
  process.threads.push_back(python_thread(4, {}));
  native::merge_native_stacks(process, {native_stack(4, {"epoll_wait", "start_thread", "clone3"})}, false);
  CHECK(names(process.threads[0].frames) ==
        std::vector<std::string>{"C:epoll_wait", "C:start_thread", "C:clone3"});
}

TEST_CASE("native merge: threads without Python state only with all_threads, missing stacks are noted") {
  for (bool all : {false, true}) {
    Process process;
    process.threads.push_back(python_thread(1, {python("main", true)}));
    process.threads.push_back(python_thread(0, {python("unknown_tid", true)}));
    process.threads.push_back(python_thread(77, {python("gone", true)}));
    NativeStack failed;
    failed.tid = 3;
    failed.problem = "thread 3 did not stop (or exited)";
    native::merge_native_stacks(
        process, {native_stack(1, {"_PyEval_EvalFrameDefault", "main"}), native_stack(2, {"nccl_proxy", "clone3"}),
                  failed},
        all);
    REQUIRE(process.threads.size() == (all ? 5u : 3u));
    CHECK(names(process.threads[0].frames) == std::vector<std::string>{"Py:main", "C:main"});
    CHECK(process.threads[1].native_note == "native stack not available: the thread's id is unknown");
    CHECK(process.threads[2].native_note == "native stack not available: no such thread in the process");
    if (all) {
      CHECK(process.threads[3].native_id == 2);
      CHECK(process.threads[3].thread_id == 0);
      CHECK(names(process.threads[3].frames) == std::vector<std::string>{"C:nccl_proxy", "C:clone3"});
      CHECK(process.threads[4].frames.empty());
      CHECK(process.threads[4].native_note == "native stack not available: " + failed.problem);
    }
  }
}

TEST_CASE("native merge: python_runs counts entry frames and a trailing unmarked run") {
  CHECK(native::python_runs({}) == 0);
  CHECK(native::python_runs({python("a", true), python("b", true)}) == 2);
  CHECK(native::python_runs({python("a", false), python("b", true)}) == 1);
  CHECK(native::python_runs({python("a", true), python("b", false)}) == 2);
}
