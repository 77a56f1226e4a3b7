#include "native/merge_native.h"

#include <algorithm>
#include <fmt/format.h>

namespace pyframes::native {

namespace {

size_t count_eval_frames(const std::vector<Frame>& frames) {
  return static_cast<size_t>(std::count_if(frames.begin(), frames.end(), is_eval_loop_frame));
}

// Native frames with each evaluation-loop frame replaced by its run of Python frames; the
// caller has checked that the counts agree.
std::vector<Frame> interleave(const std::vector<Frame>& python, std::vector<Frame> native) {
  std::vector<Frame> merged;
  merged.reserve(python.size() + native.size());
  size_t next_python = 0;
  for (Frame& frame : native) {
    if (!is_eval_loop_frame(frame)) {
      merged.push_back(std::move(frame));
      continue;
    }
    // This call ran Python frames up to and including the next entry frame.
    while (next_python < python.size()) {
      merged.push_back(python[next_python]);
      if (python[next_python++].is_entry) break;
    }
  }
  return merged;
}

void unmerged(Thread& thread, NativeStack& stack, std::string note) {
  thread.native_note = std::move(note);
  thread.native_frames = std::move(stack.frames);
}

void merge_thread(Thread& thread, NativeStack& stack) {
  if (stack.frames.empty()) {
    thread.native_note = fmt::format("native stack not available: {}",
                                     stack.problem.empty() ? "no frames" : stack.problem);
    return;
  }
  if (thread.truncated) return unmerged(thread, stack, "native stack not merged: the Python stack is incomplete");
  const size_t calls = count_eval_frames(stack.frames);
  const size_t runs = python_runs(thread.frames);
  if (calls != runs) {
    std::string note = fmt::format("native stack not merged: {} call{} of the evaluation loop for {} run{} of Python frames",
                                   calls, calls == 1 ? "" : "s", runs, runs == 1 ? "" : "s");
    if (!stack.problem.empty()) note += fmt::format("; native stack may be incomplete: {}", stack.problem);
    return unmerged(thread, stack, std::move(note));
  }
  thread.frames = interleave(thread.frames, std::move(stack.frames));
  if (!stack.problem.empty()) thread.native_note = fmt::format("native stack may be incomplete: {}", stack.problem);
}

// Several thread states on one OS thread (a sub-interpreter run on it): `states` in the order
// they are listed, the main interpreter's (the outermost) first. The OS thread's native stack
// holds the evaluation-loop calls of all of them, the innermost thread state's first. Each gets
// its slice, as pystack gives it: the innermost state the native frames up to and including its
// outermost evaluation-loop call, the next one the frames from there to its own outermost call,
// and the outermost state the rest. Slicing needs every count to agree; otherwise the first
// state keeps the whole stack, unmerged, with a note, and the others say where it is.
void merge_shared_stack(Process& process, const std::vector<size_t>& states, NativeStack& stack) {
  size_t runs = 0;
  bool whole = true;
  for (size_t index : states) {
    runs += python_runs(process.threads[index].frames);
    whole = whole && !process.threads[index].truncated;
  }
  if (stack.frames.empty() || !whole || count_eval_frames(stack.frames) != runs) {
    merge_thread(process.threads[states.front()], stack);
    for (size_t i = 1; i < states.size(); ++i) {
      process.threads[states[i]].native_note =
          "native stack not merged: it is shown with another thread state of this thread";
    }
    return;
  }
  size_t cursor = 0;
  for (size_t k = states.size(); k-- > 0;) {
    Thread& thread = process.threads[states[k]];
    NativeStack slice;
    slice.tid = stack.tid;
    slice.problem = k == 0 ? stack.problem : std::string();  // an unwind problem is at the outer end
    size_t end = stack.frames.size();
    if (k > 0) {
      size_t calls = python_runs(thread.frames);
      for (end = cursor; end < stack.frames.size() && calls > 0; ++end) {
        if (is_eval_loop_frame(stack.frames[end])) --calls;
      }
    }
    slice.frames.assign(stack.frames.begin() + static_cast<std::ptrdiff_t>(cursor),
                        stack.frames.begin() + static_cast<std::ptrdiff_t>(end));
    cursor = end;
    merge_thread(thread, slice);
  }
}

}  // namespace

bool is_eval_loop_frame(const Frame& frame) {
  if (frame.kind != Frame::Kind::Native) return false;
  const std::string_view name = frame.function;
  return name.substr(0, kEvalLoopFunction.size()) == kEvalLoopFunction &&
         (name.size() == kEvalLoopFunction.size() || name[kEvalLoopFunction.size()] == '.');
}

size_t python_runs(const std::vector<Frame>& python_frames) {
  size_t runs = 0;
  for (const Frame& frame : python_frames) runs += frame.is_entry ? 1 : 0;
  if (!python_frames.empty() && !python_frames.back().is_entry) ++runs;
  return runs;
}

void merge_native_stack(Thread& thread, NativeStack stack) { merge_thread(thread, stack); }

void merge_native_stacks(Process& process, std::vector<NativeStack> stacks, bool all_threads) {
  std::vector<bool> used(stacks.size(), false);
  std::vector<std::vector<size_t>> states_of_stack(stacks.size());  // thread states per OS thread, in listed order
  for (size_t t = 0; t < process.threads.size(); ++t) {
    Thread& thread = process.threads[t];
    auto it = std::find_if(stacks.begin(), stacks.end(), [&](const NativeStack& s) {
      return thread.native_id != 0 && s.tid == thread.native_id;
    });
    if (it == stacks.end()) {
      thread.native_note = thread.native_id == 0 ? "native stack not available: the thread's id is unknown"
                                                 : "native stack not available: no such thread in the process";
      continue;
    }
    const auto index = static_cast<size_t>(it - stacks.begin());
    used[index] = true;
    states_of_stack[index].push_back(t);
  }
  for (size_t i = 0; i < stacks.size(); ++i) {
    if (states_of_stack[i].size() == 1) merge_thread(process.threads[states_of_stack[i].front()], stacks[i]);
    if (states_of_stack[i].size() > 1) merge_shared_stack(process, states_of_stack[i], stacks[i]);
  }
  if (!all_threads) return;
  for (size_t i = 0; i < stacks.size(); ++i) {
    if (used[i]) continue;
    Thread thread;
    thread.native_id = stacks[i].tid;
    thread.frames = std::move(stacks[i].frames);
    if (!stacks[i].problem.empty()) {
      thread.native_note = fmt::format("native stack {}: {}", thread.frames.empty() ? "not available" : "may be incomplete",
                                       stacks[i].problem);
    }
    process.threads.push_back(std::move(thread));
  }
}

}  // namespace pyframes::native
