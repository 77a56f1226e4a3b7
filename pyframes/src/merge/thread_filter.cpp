// Which threads a view may leave out. A hang tool's answer is the waiting thread, so hiding idle
// threads (--hide-idle) never hides the thread a process is stuck in: its main thread, its only
// thread that runs Python, or a thread inside a collective (torch.distributed, c10d, NCCL).
#include <algorithm>
#include <string_view>

#include "pyframes/merge.h"

namespace pyframes {

namespace {

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

bool runs_python(const Thread& thread) {
  return std::any_of(thread.frames.begin(), thread.frames.end(),
                     [](const Frame& f) { return f.kind == Frame::Kind::Python; });
}

}  // namespace

bool in_collective(const Thread& thread) {
  return std::any_of(thread.frames.begin(), thread.frames.end(), [](const Frame& f) {
    if (f.kind == Frame::Kind::Python) {
      return contains(f.file, "/torch/distributed/") || contains(f.file, "/deepspeed/comm/");
    }
    return contains(f.function, "c10d::") || contains(f.function, "nccl") || contains(f.module, "libnccl");
  });
}

bool kept_when_hiding_idle(const Process& process, size_t thread) {
  const Thread& candidate = process.threads[thread];
  if (candidate.state != ThreadState::Idle) return true;
  if (thread == main_thread_index(process)) return true;
  if (in_collective(candidate)) return true;
  if (!runs_python(candidate)) return false;
  const auto python_threads = std::count_if(process.threads.begin(), process.threads.end(), runs_python);
  return python_threads == 1;
}

size_t hide_idle_threads(std::vector<Process>& processes) {
  size_t hidden = 0;
  for (Process& process : processes) {
    std::vector<bool> keep(process.threads.size());  // decided first: a moved thread reads empty
    for (size_t t = 0; t < keep.size(); ++t) keep[t] = kept_when_hiding_idle(process, t);
    std::vector<Thread> kept;
    for (size_t t = 0; t < keep.size(); ++t) {
      if (keep[t]) {
        kept.push_back(std::move(process.threads[t]));
      } else {
        ++hidden;
      }
    }
    process.threads = std::move(kept);
  }
  return hidden;
}

}  // namespace pyframes
