#include "walk/code_info.h"

#include <fmt/format.h>

#include "linetable/line_table.h"

namespace pyframes {

namespace {

constexpr size_t kMaxName = 1024;
constexpr size_t kMaxFilename = 4096;
constexpr size_t kMaxLineTable = 1 << 20;

Result<std::string> str_field(const ObjectReader& reader, uint64_t code, int offset, size_t max, const char* what) {
  auto pointer = reader.memory().read_pointer(code + static_cast<uint64_t>(offset));
  if (!pointer) return reader.memory().read_error(ReadStatus::Unmapped, code, what);
  auto text = reader.str(*pointer, max, true);
  if (!text) {
    return make_error(ErrorKind::Corrupt, fmt::format("code object {:#x}: bad {}: {}", code, what, text.error().message));
  }
  return std::move(text.value());
}

}  // namespace

Result<CodeInfo> read_code_info(const ObjectReader& reader, uint64_t code) {
  const Layout& layout = reader.layout();
  CodeInfo info;
  PYFRAMES_TRY(name, str_field(reader, code, layout.code.name, kMaxName, "co_name"));
  info.name = std::move(name);
  if (layout.code.qualname >= 0) {
    PYFRAMES_TRY(qualname, str_field(reader, code, layout.code.qualname, kMaxName, "co_qualname"));
    info.qualname = std::move(qualname);
  } else {
    info.qualname = info.name;
  }
  PYFRAMES_TRY(filename, str_field(reader, code, layout.code.filename, kMaxFilename, "co_filename"));
  info.filename = std::move(filename);
  auto firstlineno = reader.memory().read_value<int32_t>(code + static_cast<uint64_t>(layout.code.firstlineno));
  if (!firstlineno) return reader.memory().read_error(ReadStatus::Unmapped, code, "co_firstlineno");
  info.firstlineno = *firstlineno;
  if (auto table = reader.memory().read_pointer(code + static_cast<uint64_t>(layout.code.linetable))) {
    auto bytes = reader.bytes(*table, kMaxLineTable);
    if (bytes) info.linetable = std::move(bytes.value());
  }
  return info;
}

int code_line(const CodeInfo& info, const Layout& layout, int32_t offset) {
  if (offset == kUnknownOffset) return 0;
  int line = line_for_offset(layout.line_table, info.linetable, info.firstlineno, offset);
  return line < 0 ? 0 : line;
}

const CodeInfo* CodeCache::get(uint64_t code, std::string* error) {
  auto it = cache_.find(code);
  if (it == cache_.end()) it = cache_.emplace(code, read_code_info(reader_, code)).first;
  if (!it->second) {
    if (error != nullptr) *error = it->second.error().message;
    return nullptr;
  }
  return &it->second.value();
}

Result<Frame> CodeCache::frame(const RawFrame& raw) {
  std::string error;
  const CodeInfo* info = get(raw.code, &error);
  if (info == nullptr) return make_error(ErrorKind::Corrupt, error);
  Frame frame;
  frame.kind = Frame::Kind::Python;
  frame.function = info->name;
  frame.qualname = info->qualname;
  frame.file = info->filename;
  frame.line = code_line(*info, reader_.layout(), raw.instruction_offset);
  if (reader_.layout().line_table == LineTableFormat::Locations311 && raw.instruction_offset != kUnknownOffset &&
      frame.line > 0) {
    Position position = location_table_position(info->linetable, info->firstlineno, raw.instruction_offset);
    // Only a whole range is shown: a line, an end line not before it, and both columns.
    if (position.line == frame.line && position.end_line >= position.line && position.column >= 0 &&
        position.end_column >= 0) {
      frame.end_line = position.end_line;
      frame.column = position.column;
      frame.end_column = position.end_column;
    }
  }
  frame.is_entry = raw.is_entry;
  frame.frame_address = raw.frame;
  return frame;
}

}  // namespace pyframes
