// read_stacks: interpreters -> thread states -> frames, into the plain model. Works on any
// Memory (live process, core file, self); what only a live process offers (thread names from
// /proc, scheduler state) is added by read_process.
#include <fmt/format.h>

#include <algorithm>

#include "objects/object_reader.h"
#include "pyframes/layout.h"
#include "pyframes/pyframes.h"
#include "walk/code_info.h"
#include "walk/frame_chain.h"
#include "walk/gc_state.h"
#include "walk/gil.h"
#include "walk/locals.h"
#include "walk/namespaces.h"
#include "walk/native_thread_id.h"
#include "walk/thread_names.h"
#include "walk/interpreters.h"

namespace pyframes {

namespace {

const char* to_string(ListStop stop) {
  switch (stop) {
    case ListStop::End: return "end";
    case ListStop::Limit: return "too many entries";
    case ListStop::Cycle: return "the list loops";
    case ListStop::Unreadable: return "an entry could not be read";
    case ListStop::Stopped: return "stopped";
  }
  return "unknown";
}

Thread read_thread(const ObjectReader& reader, CodeCache& codes, CodeTypeCheck& code_check,
                   NamespaceReader& namespaces, uint64_t tstate,
                   uint64_t gil_holder_tstate, const std::unordered_map<uint64_t, std::string>& names,
                   const ReadOptions& options) {
  const Memory& memory = reader.memory();
  const Layout& layout = reader.layout();
  Thread thread;
  thread.thread_id = memory.read_value<uint64_t>(tstate + static_cast<uint64_t>(layout.thread_state.thread_id)).value_or(0);
  if (layout.thread_state.native_thread_id >= 0) {
    thread.native_id =
        memory.read_value<int64_t>(tstate + static_cast<uint64_t>(layout.thread_state.native_thread_id)).value_or(0);
  } else {
    thread.native_id = tid_from_pthread(memory, thread.thread_id).value_or(0);
  }
  if (auto it = names.find(thread.thread_id); it != names.end()) thread.name = it->second;
  thread.gil = gil_holder_tstate != 0 && gil_holder_tstate == tstate;
  thread.state = thread.gil ? ThreadState::HoldsGil : ThreadState::Unknown;

  std::string failure;
  WalkStop stop = walk_frames(memory, layout, tstate, options.max_frames, code_check, [&](const RawFrame& raw) {
    auto frame = codes.frame(raw);
    if (!frame) {
      failure = frame.error().message;
      return false;
    }
    if (options.locals) frame->locals = read_locals(reader, raw);
    if (options.globals) namespaces.read(raw, frame.value());
    thread.frames.push_back(std::move(frame.value()));
    return true;
  });
  if (stop != WalkStop::End) {
    thread.truncated = true;
    thread.truncation_reason = stop == WalkStop::Stopped ? failure : to_string(stop);
    if (stop == WalkStop::Limit) {
      thread.truncation_reason = fmt::format("stack deeper than {} frames", options.max_frames);
    }
  }
  return thread;
}

}  // namespace

Result<Process> read_stacks(const Memory& memory, const PythonTarget& target, const Layout& layout,
                            const ReadOptions& options) {
  Process process;
  process.python_version = target.version.str();
  process.free_threaded = layout.free_threaded;
  if (!layout.newer_version_note.empty()) process.warnings.push_back(layout.newer_version_note);
  ObjectReader reader(memory, layout);
  CodeCache codes(reader);
  NamespaceReader namespaces(reader);
  CodeTypeCheck code_check;

  std::vector<uint64_t> interpreters;
  ListStop interp_stop = for_each_interpreter(memory, layout, target, [&](uint64_t interp) {
    interpreters.push_back(interp);
    return true;
  });
  if (interpreters.empty()) {
    uint64_t head = 0;
    ReadStatus status = first_interpreter(memory, layout, target, &head);
    if (status != ReadStatus::Ok) {
      uint64_t where = target.runtime_address != 0 ? target.runtime_address : target.interp_head_address;
      return memory.read_error(status, where, "the interpreter list");
    }
    return make_error(ErrorKind::NotPython,
                      fmt::format("{}: the Python interpreter is not running (not initialised yet, or finalising)",
                                  memory.describe()),
                      "try again once the program has started");
  }
  std::reverse(interpreters.begin(), interpreters.end());  // the main interpreter (the oldest) first
  if (interp_stop != ListStop::End) {
    process.warnings.push_back(fmt::format("interpreter list cut short: {}", to_string(interp_stop)));
  }

  // A collection in any interpreter counts (each has its own collector from 3.9).
  bool all_known = true;
  for (uint64_t interp : interpreters) {
    auto collecting = gc_collecting(memory, layout, target, interp);
    if (collecting.value_or(false)) {
      process.gc_collecting = true;
      break;
    }
    all_known = all_known && collecting.has_value();
  }
  if (!process.gc_collecting && all_known) process.gc_collecting = false;

  size_t thread_states_seen = 0;
  for (uint64_t interp : interpreters) {
    int64_t interpreter_id = -1;
    if (layout.interpreter.id >= 0) {
      interpreter_id = memory.read_value<int64_t>(interp + static_cast<uint64_t>(layout.interpreter.id)).value_or(-1);
    }
    std::vector<uint64_t> tstates;
    ListStop thread_stop = for_each_thread_state(memory, layout, interp, [&](uint64_t tstate) {
      tstates.push_back(tstate);
      return true;
    });
    if (thread_stop != ListStop::End) {
      process.warnings.push_back(
          fmt::format("thread list of interpreter {:#x} cut short: {}", interp, to_string(thread_stop)));
    }
    thread_states_seen += tstates.size();
    std::reverse(tstates.begin(), tstates.end());  // oldest (usually the main thread) first
    uint64_t holder = gil_holder(memory, layout, target, interp);
    if (interp == interpreters.front()) process.gil_disabled = gil_disabled(memory, layout, target, interp);
    auto names = python_thread_names(reader, interp);
    for (uint64_t tstate : tstates) {
      process.threads.push_back(read_thread(reader, codes, code_check, namespaces, tstate, holder, names, options));
      process.threads.back().interpreter_id = interpreter_id;
    }
  }
  // One rule for a process caught starting up (or shutting down): without a thread state there is
  // no Python stack to show, whether the interpreter exists yet or not.
  if (process.threads.empty() && thread_states_seen == 0) {
    return make_error(ErrorKind::NotPython,
                      fmt::format("{}: the Python interpreter has no thread states (not initialised yet, or finalising)",
                                  memory.describe()),
                      "try again once the program has started");
  }
  return process;
}

}  // namespace pyframes
