// Text output in the style of py-spy dump and gdb py-bt: a process header, then one block per
// thread with its native id, state and name, frames innermost first as "function (file:line)"
// and the source line under each Python frame when the file is readable.
#include <fmt/format.h>

#include "pyframes/render.h"
#include "render/utf8.h"

namespace pyframes {

namespace {

struct Palette {
  const char* header = "";
  const char* function = "";
  const char* location = "";
  const char* warning = "";
  const char* reset = "";
};

Palette palette_for(bool color) {
  if (!color) return {};
  return Palette{"\x1b[1m", "\x1b[32m", "\x1b[36m", "\x1b[33m", "\x1b[0m"};
}

std::string safe(std::string_view text) { return render::printable_line(text); }

bool is_live(const Process& process) {
  return process.pid > 0 && (process.source.empty() || process.source.rfind("pid ", 0) == 0);
}

// Where the source of `file` can be read from here: the target may run in another mount
// namespace or have started with a relative script path.
std::optional<std::string> source_line(const Process& process, const Frame& frame, SourceCache& sources) {
  const std::string& file = frame.file;
  if (file.empty() || file.front() == '<' || frame.line <= 0) return std::nullopt;  // <string>, <frozen ...>
  const bool live = is_live(process);
  if (file.front() == '/') {
    if (auto line = sources.line(file, frame.line)) return line;
    if (live) return sources.line(fmt::format("/proc/{}/root{}", process.pid, file), frame.line);
    return std::nullopt;
  }
  if (live) return sources.line(fmt::format("/proc/{}/cwd/{}", process.pid, file), frame.line);
  return std::nullopt;
}

std::string thread_state(const Thread& thread) {
  std::string state;
  switch (thread.state) {
    case ThreadState::Running: state = "running"; break;
    case ThreadState::WaitingForGil: state = "waiting for the GIL"; break;
    case ThreadState::Idle: state = "idle"; break;
    case ThreadState::HoldsGil:
    case ThreadState::Unknown: break;
  }
  if (thread.gil || thread.state == ThreadState::HoldsGil) state += state.empty() ? "holds the GIL" : ", holds the GIL";
  return state;
}

void render_process_header(std::string& out, const Process& process, const Palette& colors) {
  std::string title = fmt::format("Process {}", process.pid);
  if (!process.rank.empty()) {
    title += fmt::format(" (rank {}", safe(process.rank));
    if (!process.local_rank.empty()) title += fmt::format(", local rank {}", safe(process.local_rank));
    title += ")";
  }
  if (!is_live(process) && !process.source.empty()) title += fmt::format(" from {}", safe(process.source));
  std::string command;
  for (const std::string& argument : process.command_line) {
    if (!command.empty()) command += ' ';
    command += safe(argument);
  }
  if (command.empty()) command = safe(process.executable);
  out += fmt::format("{}{}{}{}\n", colors.header, title, command.empty() ? "" : ": " + command, colors.reset);
  out += fmt::format("Python {}", process.python_version.empty() ? "(version unknown)" : safe(process.python_version));
  if (!process.executable.empty()) out += fmt::format(" ({})", safe(process.executable));
  out += '\n';
  if (!process.fatal_signal.empty()) out += fmt::format("Killed by {}\n", safe(process.fatal_signal));
  for (const std::string& warning : process.warnings) {
    out += fmt::format("{}warning: {}{}\n", colors.warning, safe(warning), colors.reset);
  }
}

void render_frame(std::string& out, const Process& process, const Frame& frame, const TextOptions& options,
                  SourceCache* sources, const Palette& colors) {
  std::string function = safe(frame.function);
  std::string location;
  if (frame.kind == Frame::Kind::Native) {
    if (function.empty()) function = fmt::format("{:#x}", frame.address);
    if (!frame.file.empty()) {
      location = frame.line > 0 ? fmt::format("{}:{}", safe(frame.file), frame.line) : safe(frame.file);
    } else if (!frame.module.empty()) {
      location = fmt::format("{}+{:#x}", safe(frame.module), frame.offset);
    }
  } else {
    if (function.empty()) function = "???";
    location = frame.line > 0 ? fmt::format("{}:{}", safe(frame.file), frame.line) : safe(frame.file);
  }
  out += fmt::format("    {}{}{}", colors.function, function, colors.reset);
  if (!location.empty()) out += fmt::format(" ({}{}{})", colors.location, location, colors.reset);
  if (frame.kind == Frame::Kind::Native) out += " [native]";
  out += '\n';
  if (options.source_lines && sources != nullptr && frame.kind == Frame::Kind::Python) {
    if (auto line = source_line(process, frame, *sources); line && !line->empty()) out += fmt::format("        {}\n", *line);
  }
  for (const Local& local : frame.locals) {
    out += fmt::format("        {}{} = {}\n", local.is_argument ? "(arg) " : "", safe(local.name), safe(local.repr));
  }
}

void render_thread(std::string& out, const Process& process, const Thread& thread, const TextOptions& options,
                   SourceCache* sources, const Palette& colors) {
  const std::string id =
      thread.native_id != 0 ? fmt::format("{}", thread.native_id) : fmt::format("{:#x}", thread.thread_id);
  const std::string state = thread_state(thread);
  out += fmt::format("{}Thread {}{}{}{}\n", colors.header, id, state.empty() ? "" : " (" + state + ")",
                     thread.name.empty() ? "" : fmt::format(": \"{}\"", safe(thread.name)), colors.reset);
  for (const Frame& frame : thread.frames) render_frame(out, process, frame, options, sources, colors);
  if (thread.frames.empty() && !thread.truncated) out += "    (no Python frames)\n";
  if (thread.truncated) {
    const std::string reason = thread.truncation_reason.empty() ? "frame chain cut" : safe(thread.truncation_reason);
    out += fmt::format("    {}... truncated: {}{}\n", colors.warning, reason, colors.reset);
  }
}

}  // namespace

std::string render_text(const Process& process, const TextOptions& options, SourceCache* sources) {
  const Palette colors = palette_for(options.color);
  std::string out;
  render_process_header(out, process, colors);
  if (process.threads.empty()) out += "\n(no Python threads)\n";
  for (const Thread& thread : process.threads) {
    out += '\n';
    render_thread(out, process, thread, options, sources, colors);
  }
  return out;
}

}  // namespace pyframes
