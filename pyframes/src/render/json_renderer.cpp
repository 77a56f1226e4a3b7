// The --json document. Field names are part of the interface (ARCHITECTURE.md, Conventions):
// tools parse them, so they change only by addition.
#include <algorithm>

#include "pyframes/json_writer.h"
#include "pyframes/render.h"
#include "render/json_model.h"
#include "render/json_names.h"

namespace pyframes {

namespace render {

void write_frame_fields(JsonWriter& json, const Frame& frame) {
  json.key("function").value(frame.function);
  json.key("qualname").value(frame.qualname.empty() ? frame.function : frame.qualname);
  json.key("file").value(frame.file);
  json.key("line").value(frame.line);
  if (frame.column >= 0) {  // 3.11+: the instruction's source range, as code.co_positions() gives it
    json.key("end_line").value(frame.end_line);
    json.key("column").value(frame.column);
    json.key("end_column").value(frame.end_column);
  }
  json.key("kind").value(frame_kind_name(frame.kind));
  if (frame.kind == Frame::Kind::Native) {
    json.key("address").value(frame.address);
    if (!frame.module.empty()) json.key("module").value(frame.module);
    if (frame.offset != 0) json.key("offset").value(frame.offset);
  }
  if (frame.is_entry) json.key("entry").value(true);
  if (frame.kind == Frame::Kind::Python && frame.frame_address != 0) json.key("frame_address").value(frame.frame_address);
}

namespace {

// A frame's locals ("argument" says which are arguments), globals or builtins; nothing when empty.
void write_variables(JsonWriter& json, const char* key, const std::vector<Local>& variables, bool arguments) {
  if (variables.empty()) return;
  json.key(key).begin_array();
  for (const Local& local : variables) {
    json.begin_object();
    json.key("name").value(local.name);
    json.key("repr").value(local.repr);
    if (arguments) json.key("argument").value(local.is_argument);
    if (local.address != 0) json.key("address").value(local.address);
    json.end_object();
  }
  json.end_array();
}

// A list of strings under `key`; nothing when empty.
void write_strings(JsonWriter& json, const char* key, const std::vector<std::string>& strings) {
  if (strings.empty()) return;
  json.key(key).begin_array();
  for (const std::string& text : strings) json.value(text);
  json.end_array();
}

}  // namespace

void write_frame(JsonWriter& json, const Frame& frame) {
  json.begin_object();
  write_frame_fields(json, frame);
  write_variables(json, "locals", frame.locals, true);
  write_variables(json, "globals", frame.globals, false);
  write_variables(json, "builtins", frame.builtins, false);
  json.end_object();
}

namespace {

void write_frames(JsonWriter& json, const char* key, const std::vector<Frame>& frames) {
  json.key(key).begin_array();
  for (const Frame& frame : frames) write_frame(json, frame);
  json.end_array();
}

}  // namespace

void write_thread_fields(JsonWriter& json, const Thread& thread) {
  json.key("thread_id").value(thread.thread_id);
  json.key("native_id").value(thread.native_id);
  json.key("name").value(thread.name);
  json.key("gil").value(thread.gil);
  json.key("state").value(thread_state_name(thread.state));
  if (thread.interpreter_id >= 0) json.key("interpreter").value(thread.interpreter_id);
  if (thread.truncated) {
    json.key("truncated").value(true);
    json.key("truncation_reason").value(thread.truncation_reason);
  }
}

void write_thread(JsonWriter& json, const Thread& thread) {
  json.begin_object();
  write_thread_fields(json, thread);
  write_frames(json, "frames", thread.frames);  // always there, even empty
  if (!thread.native_note.empty()) json.key("native_note").value(thread.native_note);
  if (!thread.native_frames.empty()) write_frames(json, "native_frames", thread.native_frames);
  json.end_object();
}

void write_process(JsonWriter& json, const Process& process) {
  json.begin_object();
  json.key("pid").value(process.pid);
  if (!process.source.empty()) json.key("source").value(process.source);
  json.key("python").value(process.python_version);
  if (process.free_threaded) {
    json.key("free_threaded").value(true);
    json.key("gil_disabled").value(process.gil_disabled);
  }
  if (process.object_offsets.known()) {  // for readers of the target's raw memory (the gdb extension)
    json.key("object_offsets").begin_object();
    json.key("ob_type").value(process.object_offsets.ob_type);
    json.key("tp_name").value(process.object_offsets.tp_name);
    json.key("cfunction_self").value(process.object_offsets.cfunction_self);
    json.end_object();
  }
  // A collection is running (true), none is (false), or it cannot be told (null: 3.6, a saved
  // document without it, a state that did not read).
  json.key("gc_collecting");
  if (process.gc_collecting) {
    json.value(*process.gc_collecting);
  } else {
    json.null();
  }
  if (!process.executable.empty()) json.key("executable").value(process.executable);
  write_strings(json, "command_line", process.command_line);
  if (!process.rank.empty()) json.key("rank").value(process.rank);
  if (!process.local_rank.empty()) json.key("local_rank").value(process.local_rank);
  if (process.ppid != 0) json.key("ppid").value(process.ppid);
  if (process.worker_of != 0) json.key("worker_of").value(process.worker_of);
  if (!process.fatal_signal.empty()) json.key("fatal_signal").value(process.fatal_signal);
  const bool truncated =
      std::any_of(process.threads.begin(), process.threads.end(), [](const Thread& t) { return t.truncated; });
  if (truncated) json.key("truncated").value(true);
  write_strings(json, "warnings", process.warnings);
  json.key("threads").begin_array();
  for (const Thread& thread : process.threads) write_thread(json, thread);
  json.end_array();
  json.end_object();
}

void write_failure(JsonWriter& json, const FailedTarget& failure) {
  json.begin_object();
  if (failure.pid != 0) json.key("pid").value(failure.pid);
  json.key("target").value(failure.target);
  json.key("kind").value(error_kind_name(failure.error.kind));
  json.key("message").value(failure.error.message);
  const std::string hint = failure.error.hint.empty() ? default_hint(failure.error.kind) : failure.error.hint;
  if (!hint.empty()) json.key("hint").value(hint);
  json.end_object();
}

void write_failures(JsonWriter& json, const std::vector<FailedTarget>& failures) {
  if (failures.empty()) return;
  json.key("errors").begin_array();
  for (const FailedTarget& failure : failures) write_failure(json, failure);
  json.end_array();
}

}  // namespace render

std::string render_json(const std::vector<Process>& processes, const std::vector<FailedTarget>& failures,
                        const JsonOptions& options) {
  JsonWriter json(options.pretty);
  json.begin_object();
  json.key("processes").begin_array();
  for (const Process& process : processes) render::write_process(json, process);
  json.end_array();
  render::write_failures(json, failures);
  json.end_object();
  return json.str() + "\n";
}

}  // namespace pyframes
