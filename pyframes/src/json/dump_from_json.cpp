// The inverse of render_json: a saved `pyframes --json` document back into the model. Required
// fields (a process's threads, a thread's frames, a frame's function/file/line) must be there
// with the right type; optional ones default like the model does. The first problem found is
// the error, named by its path in the document.
#include <fmt/format.h>

#include "pyframes/json_reader.h"
#include "render/json_names.h"

namespace pyframes {

namespace {

// Reads the members of one JSON object; the first type problem becomes `problem`.
class ObjectReader {
 public:
  ObjectReader(const JsonValue& object, std::string path, std::optional<std::string>& problem)
      : object_(object), path_(std::move(path)), problem_(problem) {
    if (!object.is_object()) complain(path_, "is not an object");
  }

  const std::string& path() const { return path_; }

  std::string text(std::string_view key, bool required = false) {
    const JsonValue* value = member(key, required);
    if (value == nullptr) return {};
    if (value->string() == nullptr) {
      complain(field(key), "is not a string");
      return {};
    }
    return *value->string();
  }

  int64_t int64(std::string_view key, bool required = false) {
    const JsonValue* value = member(key, required);
    if (value == nullptr) return 0;
    if (!value->int64()) complain(field(key), "is not an integer");
    return value->int64().value_or(0);
  }

  uint64_t uint64(std::string_view key) {
    const JsonValue* value = member(key, false);
    if (value == nullptr) return 0;
    if (!value->uint64()) complain(field(key), "is not an unsigned integer");
    return value->uint64().value_or(0);
  }

  bool has(std::string_view key) const { return object_.find(key) != nullptr; }
  bool is_set(std::string_view key) const {
    const JsonValue* value = object_.find(key);
    return value != nullptr && !value->is_null();
  }

  bool flag(std::string_view key) {
    const JsonValue* value = member(key, false);
    if (value == nullptr) return false;
    if (!value->boolean()) complain(field(key), "is not true or false");
    return value->boolean().value_or(false);
  }

  // A member of any type, nullptr when absent or null.
  const JsonValue* optional(std::string_view key) { return member(key, false); }

  // The items of an array member (empty when absent and not required, or on error).
  const std::vector<JsonValue>& array(std::string_view key, bool required = false) {
    static const std::vector<JsonValue> kNone;
    const JsonValue* value = member(key, required);
    if (value == nullptr) return kNone;
    if (!value->is_array()) {
      complain(field(key), "is not an array");
      return kNone;
    }
    return value->items();
  }

  std::string field(std::string_view key) const { return fmt::format("{}.{}", path_, key); }

  void complain(const std::string& where, std::string_view what) {
    if (!problem_) problem_ = fmt::format("{} {}", where, what);
  }

 private:
  const JsonValue* member(std::string_view key, bool required) {
    const JsonValue* value = object_.find(key);
    if (value != nullptr && value->is_null() && !required) return nullptr;
    if (value == nullptr && required) complain(field(key), "is missing");
    return value;
  }

  const JsonValue& object_;
  std::string path_;
  std::optional<std::string>& problem_;
};

std::vector<std::string> strings(ObjectReader& fields, std::string_view key) {
  std::vector<std::string> out;
  const auto& items = fields.array(key);
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].string() == nullptr) {
      fields.complain(fmt::format("{}[{}]", fields.field(key), i), "is not a string");
      break;
    }
    out.push_back(*items[i].string());
  }
  return out;
}

Local read_local(const JsonValue& value, std::string path, std::optional<std::string>& problem) {
  ObjectReader fields(value, std::move(path), problem);
  Local local;
  local.name = fields.text("name", true);
  local.repr = fields.text("repr", true);
  local.is_argument = fields.flag("argument");
  local.address = fields.uint64("address");
  return local;
}

Frame read_frame(const JsonValue& value, std::string path, std::optional<std::string>& problem) {
  ObjectReader fields(value, std::move(path), problem);
  Frame frame;
  frame.function = fields.text("function", true);
  frame.qualname = fields.text("qualname");
  if (frame.qualname.empty()) frame.qualname = frame.function;
  frame.file = fields.text("file", true);
  const int64_t line = fields.int64("line", true);
  if (line < 0 || line > INT32_MAX) fields.complain(fields.field("line"), "is out of range");
  frame.line = static_cast<int>(line < 0 || line > INT32_MAX ? 0 : line);
  const std::string kind = fields.text("kind");
  if (!kind.empty()) {
    auto parsed = render::frame_kind_from_name(kind);
    if (!parsed) fields.complain(fields.field("kind"), "is neither \"python\" nor \"native\"");
    frame.kind = parsed.value_or(Frame::Kind::Python);
  }
  if (fields.has("column")) {  // 3.11+ documents: the source range; absent means unknown
    const int64_t end_line = fields.int64("end_line", true);
    const int64_t column = fields.int64("column", true);
    const int64_t end_column = fields.int64("end_column", true);
    if (end_line < line || end_line > INT32_MAX || column < 0 || column > INT32_MAX || end_column < 0 ||
        end_column > INT32_MAX) {
      fields.complain(fields.field("column"), "with end_line and end_column is not a source range");
    } else {
      frame.end_line = static_cast<int>(end_line);
      frame.column = static_cast<int>(column);
      frame.end_column = static_cast<int>(end_column);
    }
  }
  frame.is_entry = fields.flag("entry");
  frame.address = fields.uint64("address");
  frame.frame_address = fields.uint64("frame_address");
  frame.offset = fields.uint64("offset");
  frame.module = fields.text("module");
  for (auto [key, variables] : {std::pair{"locals", &frame.locals}, std::pair{"globals", &frame.globals},
                                std::pair{"builtins", &frame.builtins}}) {
    const auto& items = fields.array(key);
    for (size_t i = 0; i < items.size() && !problem; ++i) {
      variables->push_back(read_local(items[i], fmt::format("{}.{}[{}]", fields.path(), key, i), problem));
    }
  }
  return frame;
}

Thread read_thread(const JsonValue& value, std::string path, std::optional<std::string>& problem) {
  ObjectReader fields(value, std::move(path), problem);
  Thread thread;
  thread.thread_id = fields.uint64("thread_id");
  thread.native_id = fields.int64("native_id");
  thread.name = fields.text("name");
  thread.gil = fields.flag("gil");
  if (fields.is_set("interpreter")) thread.interpreter_id = fields.int64("interpreter");
  const std::string state = fields.text("state");
  if (!state.empty()) {
    auto parsed = render::thread_state_from_name(state);
    if (!parsed) fields.complain(fields.field("state"), "is not a thread state pyframes writes");
    thread.state = parsed.value_or(ThreadState::Unknown);
  }
  thread.truncated = fields.flag("truncated");
  thread.truncation_reason = fields.text("truncation_reason");
  // "frames" is required, "native_frames" optional; both are read the same way.
  const auto read_frames = [&](const char* key, bool required, std::vector<Frame>& out) {
    const auto& items = fields.array(key, required);
    out.reserve(items.size());
    for (size_t i = 0; i < items.size() && !problem; ++i) {
      out.push_back(read_frame(items[i], fmt::format("{}.{}[{}]", fields.path(), key, i), problem));
    }
  };
  read_frames("frames", true, thread.frames);
  thread.native_note = fields.text("native_note");
  read_frames("native_frames", false, thread.native_frames);
  return thread;
}

Process read_process(const JsonValue& value, std::string path, std::optional<std::string>& problem) {
  ObjectReader fields(value, std::move(path), problem);
  Process process;
  process.pid = fields.int64("pid");
  process.source = fields.text("source");
  process.python_version = fields.text("python");
  process.free_threaded = fields.flag("free_threaded");
  process.gil_disabled = fields.flag("gil_disabled");
  if (const JsonValue* offsets_value = fields.optional("object_offsets")) {
    ObjectReader offsets(*offsets_value, fields.field("object_offsets"), problem);
    process.object_offsets.ob_type = static_cast<int>(offsets.int64("ob_type", true));
    process.object_offsets.tp_name = static_cast<int>(offsets.int64("tp_name", true));
    process.object_offsets.cfunction_self = static_cast<int>(offsets.int64("cfunction_self", true));
  }
  if (fields.has("gc_collecting")) {  // null (cannot tell) reads as absent
    const bool collecting = fields.flag("gc_collecting");
    if (!problem && fields.is_set("gc_collecting")) process.gc_collecting = collecting;
  }
  process.executable = fields.text("executable");
  process.command_line = strings(fields, "command_line");
  process.rank = fields.text("rank");
  process.local_rank = fields.text("local_rank");
  process.ppid = fields.int64("ppid");
  process.worker_of = fields.int64("worker_of");
  process.fatal_signal = fields.text("fatal_signal");
  process.warnings = strings(fields, "warnings");
  const auto& threads = fields.array("threads", true);
  for (size_t i = 0; i < threads.size() && !problem; ++i) {
    process.threads.push_back(read_thread(threads[i], fmt::format("{}.threads[{}]", fields.path(), i), problem));
  }
  return process;
}

std::vector<Mapping> read_mappings(const JsonValue& value, std::string path, std::optional<std::string>& problem) {
  ObjectReader fields(value, std::move(path), problem);
  std::vector<Mapping> mappings;
  const auto& items = fields.array("mappings");
  for (size_t i = 0; i < items.size() && !problem; ++i) {
    ObjectReader item(items[i], fmt::format("{}.mappings[{}]", fields.path(), i), problem);
    Mapping mapping;
    mapping.start = item.uint64("start");
    mapping.end = item.uint64("end");
    mapping.file_offset = item.uint64("offset");
    mapping.path = item.text("path");
    mapping.readable = true;
    if (mapping.end <= mapping.start) item.complain(item.field("end"), "is not past start");
    mappings.push_back(std::move(mapping));
  }
  return mappings;
}

FailedTarget read_failure(const JsonValue& value, std::string path, std::optional<std::string>& problem) {
  ObjectReader fields(value, std::move(path), problem);
  FailedTarget failure;
  failure.pid = fields.int64("pid");
  failure.target = fields.text("target", true);
  failure.error.kind = render::error_kind_from_name(fields.text("kind")).value_or(ErrorKind::Io);
  failure.error.message = fields.text("message", true);
  failure.error.hint = fields.text("hint");
  return failure;
}

}  // namespace

Result<JsonDump> dump_from_json(const JsonValue& document) {
  std::optional<std::string> problem;
  JsonDump dump;
  ObjectReader fields(document, "the document", problem);
  if (!problem && document.find("processes") == nullptr) {
    problem = "the document has no \"processes\" array";
  }
  const auto& processes = fields.array("processes", true);
  dump.processes.reserve(processes.size());
  for (size_t i = 0; i < processes.size() && !problem; ++i) {
    dump.processes.push_back(read_process(processes[i], fmt::format("processes[{}]", i), problem));
    if (!problem) dump.mappings.push_back(read_mappings(processes[i], fmt::format("processes[{}]", i), problem));
  }
  const auto& errors = fields.array("errors");
  for (size_t i = 0; i < errors.size() && !problem; ++i) {
    dump.failures.push_back(read_failure(errors[i], fmt::format("errors[{}]", i), problem));
  }
  if (problem) {
    return make_error(ErrorKind::Corrupt, fmt::format("not a pyframes --json document: {}", *problem),
                      "pass documents written by pyframes --json");
  }
  return dump;
}

}  // namespace pyframes
