#include "render/text_parts.h"

#include <fmt/format.h>

#include "pyframes/utf8.h"

namespace pyframes::render {

Palette palette_for(bool color) {
  if (!color) return {};
  return Palette{"\x1b[1m", "\x1b[32m", "\x1b[36m", "\x1b[33m", "\x1b[0m"};
}

std::string safe(std::string_view text) { return printable_line(text); }

bool is_live(int64_t pid, const std::string& source) {
  return pid > 0 && (source.empty() || source.rfind("pid ", 0) == 0);
}

std::optional<std::string> source_line(int64_t pid, bool live, const Frame& frame, SourceCache& sources) {
  const std::string& file = frame.file;
  if (file.empty() || file.front() == '<' || frame.line <= 0) return std::nullopt;  // <string>, <frozen ...>
  if (file.front() == '/') {
    if (auto line = sources.line(file, frame.line)) return line;
    if (live) return sources.line(fmt::format("/proc/{}/root{}", pid, file), frame.line);
    return std::nullopt;
  }
  if (live) return sources.line(fmt::format("/proc/{}/cwd/{}", pid, file), frame.line);
  return std::nullopt;
}

std::optional<std::string> source_carets(int64_t pid, bool live, const Frame& frame, SourceCache& sources) {
  const std::string& file = frame.file;
  if (frame.column < 0 || frame.end_line != frame.line) return std::nullopt;  // only one-line ranges
  if (file.empty() || file.front() == '<' || frame.line <= 0) return std::nullopt;
  if (file.front() == '/') {
    if (sources.line(file, frame.line)) return sources.carets(file, frame.line, frame.column, frame.end_column);
    if (live) return sources.carets(fmt::format("/proc/{}/root{}", pid, file), frame.line, frame.column, frame.end_column);
    return std::nullopt;
  }
  if (live) return sources.carets(fmt::format("/proc/{}/cwd/{}", pid, file), frame.line, frame.column, frame.end_column);
  return std::nullopt;
}

std::string thread_state_text(ThreadState state, bool gil) {
  std::string text;
  switch (state) {
    case ThreadState::Running: text = "running"; break;
    case ThreadState::WaitingForGil: text = "waiting for the GIL"; break;
    case ThreadState::Idle: text = "idle"; break;
    case ThreadState::HoldsGil:
    case ThreadState::Unknown: break;
  }
  if (gil || state == ThreadState::HoldsGil) text += text.empty() ? "holds the GIL" : ", holds the GIL";
  return text;
}

std::string frame_text(const Frame& frame, const Palette& colors) {
  if (frame.kind == Frame::Kind::Native) return native_frame_text(frame, colors);
  std::string function = safe(frame.function);
  if (function.empty()) function = "???";
  const std::string location = frame.line > 0 ? fmt::format("{}:{}", safe(frame.file), frame.line) : safe(frame.file);
  std::string out = fmt::format("{}{}{}", colors.function, function, colors.reset);
  if (!location.empty()) out += fmt::format(" ({}{}{})", colors.location, location, colors.reset);
  return out;
}

std::string native_frame_text(const Frame& frame, const Palette& colors) {
  std::string location;
  if (!frame.file.empty()) {
    location = frame.line > 0 ? fmt::format("{}:{}", safe(frame.file), frame.line) : safe(frame.file);
  } else if (!frame.module.empty()) {
    const size_t slash = frame.module.rfind('/');
    location = fmt::format("{}+{:#x}", safe(slash == std::string::npos ? frame.module : frame.module.substr(slash + 1)),
                           frame.offset);
  }
  if (frame.function.empty()) {
    return fmt::format("[native] {}{}{}", colors.location,
                       location.empty() ? fmt::format("{:#x}", frame.address) : location, colors.reset);
  }
  std::string text = fmt::format("[native] {}{}{}", colors.function, safe(frame.function), colors.reset);
  if (!location.empty()) text += fmt::format(" ({}{}{})", colors.location, location, colors.reset);
  return text;
}

}  // namespace pyframes::render
