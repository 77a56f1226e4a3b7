#include "report/process_json.h"

#include <fmt/format.h>

namespace hangshim::report {

namespace {

constexpr size_t kMaxThreads = 4096;
constexpr size_t kMaxFrames = 4096;

pyframes::ThreadState thread_state(const std::string& name) {
  if (name == "running") return pyframes::ThreadState::Running;
  if (name == "holds_gil") return pyframes::ThreadState::HoldsGil;
  if (name == "waiting_for_gil") return pyframes::ThreadState::WaitingForGil;
  if (name == "idle") return pyframes::ThreadState::Idle;
  return pyframes::ThreadState::Unknown;
}

}  // namespace

pyframes::Result<pyframes::Process> process_from_json(const JsonValue& document, const std::string& source) {
  const JsonValue* processes = document.find("processes");
  if (processes == nullptr || !processes->is_array() || processes->items().empty() ||
      !processes->items().front().is_object()) {
    return pyframes::make_error(pyframes::ErrorKind::Corrupt, fmt::format("{}: stacks without a process", source));
  }
  const JsonValue& p = processes->items().front();
  pyframes::Process out;
  out.pid = p.get_i64("pid");
  out.source = p.get_str("source");
  out.python_version = p.get_str("python");
  out.executable = p.get_str("executable");
  out.rank = p.get_str("rank");
  out.local_rank = p.get_str("local_rank");
  if (const JsonValue* argv = p.find("command_line"); argv != nullptr) {
    for (const auto& a : argv->items()) out.command_line.push_back(a.str());
  }
  if (const JsonValue* warnings = p.find("warnings"); warnings != nullptr) {
    for (const auto& w : warnings->items()) out.warnings.push_back(w.str());
  }
  const JsonValue* threads = p.find("threads");
  if (threads == nullptr || !threads->is_array()) {
    return pyframes::make_error(pyframes::ErrorKind::Corrupt, fmt::format("{}: stacks without threads", source));
  }
  for (const auto& t : threads->items()) {
    if (out.threads.size() >= kMaxThreads) break;
    pyframes::Thread thread;
    thread.thread_id = t.get_u64("thread_id");
    thread.native_id = t.get_i64("native_id");
    thread.name = t.get_str("name");
    thread.gil = t.get_bool("gil");
    thread.state = thread_state(t.get_str("state"));
    thread.truncated = t.get_bool("truncated");
    thread.truncation_reason = t.get_str("truncation_reason");
    if (const JsonValue* frames = t.find("frames"); frames != nullptr) {
      for (const auto& f : frames->items()) {
        if (thread.frames.size() >= kMaxFrames) break;
        pyframes::Frame frame;
        frame.kind = f.get_str("kind") == "native" ? pyframes::Frame::Kind::Native : pyframes::Frame::Kind::Python;
        frame.function = f.get_str("function");
        frame.qualname = f.get_str("qualname", frame.function);
        frame.file = f.get_str("file");
        frame.line = static_cast<int>(f.get_i64("line"));
        frame.address = f.get_u64("address");
        frame.module = f.get_str("module");
        frame.offset = f.get_u64("offset");
        frame.is_entry = f.get_bool("entry");
        thread.frames.push_back(std::move(frame));
      }
    }
    out.threads.push_back(std::move(thread));
  }
  return out;
}

}  // namespace hangshim::report
