// Text output in the style of py-spy dump and gdb py-bt: a process header, then one block per
// thread with its native id, state and name, frames innermost first as "function (file:line)"
// and the source line under each Python frame when the file is readable.
#include <fmt/format.h>

#include "pyframes/render.h"
#include "render/text_parts.h"

namespace pyframes {

namespace {

using render::Palette;
using render::safe;

bool is_live(const Process& process) { return render::is_live(process.pid, process.source); }

void render_process_header(std::string& out, const Process& process, const Palette& colors) {
  std::string title = fmt::format("Process {}", process.pid);
  if (!process.rank.empty() && process.worker_of != 0) {  // a DataLoader worker inherits RANK
    title += fmt::format(" (worker of rank {} pid {}", safe(process.rank), process.worker_of);
    if (!process.local_rank.empty()) title += fmt::format(", local rank {}", safe(process.local_rank));
    title += ")";
  } else if (!process.rank.empty()) {
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
  if (process.free_threaded) {
    out += process.gil_disabled ? ", free-threaded: GIL disabled, no thread holds one" : ", free-threaded, GIL enabled";
  }
  if (process.gc_collecting.value_or(false)) out += ", garbage collection running";
  out += '\n';
  if (!process.fatal_signal.empty()) out += fmt::format("Killed by {}\n", safe(process.fatal_signal));
  for (const std::string& warning : process.warnings) {
    out += fmt::format("{}warning: {}{}\n", colors.warning, safe(warning), colors.reset);
  }
}

void render_frame(std::string& out, const Process& process, const Frame& frame, const TextOptions& options,
                  SourceCache* sources, const Palette& colors) {
  out += fmt::format("    {}\n", render::frame_text(frame, colors));
  if (options.source_lines && sources != nullptr && frame.kind == Frame::Kind::Python) {
    auto line = render::source_line(process.pid, is_live(process), frame, *sources);
    if (line && !line->empty()) {
      out += fmt::format("        {}\n", *line);
      // 3.11+: which part of the line runs (a hang in `reduce(a) + reduce(b)`: which call).
      if (auto carets = render::source_carets(process.pid, is_live(process), frame, *sources)) {
        out += fmt::format("        {}\n", *carets);
      }
    }
  }
  for (const Local& local : frame.locals) {
    out += fmt::format("        {}{} = {}\n", local.is_argument ? "(arg) " : "", safe(local.name), safe(local.repr));
  }
  // --globals: the module's names; the builtins (the same in every frame) only in --json.
  for (const Local& global : frame.globals) {
    out += fmt::format("        (global) {} = {}\n", safe(global.name), safe(global.repr));
  }
}

// The first thread state listed before `thread` on the same OS thread (in another interpreter, as
// a sub-interpreter run on it makes), or nullptr.
const Thread* earlier_on_same_os_thread(const Process& process, const Thread& thread) {
  if (thread.native_id == 0) return nullptr;
  for (const Thread& other : process.threads) {
    if (&other == &thread) return nullptr;
    if (other.native_id == thread.native_id) return &other;
  }
  return nullptr;
}

bool shares_os_thread(const Process& process, const Thread& thread) {
  if (thread.native_id == 0) return false;
  for (const Thread& other : process.threads) {
    if (&other != &thread && other.native_id == thread.native_id) {
      return true;
    }
  }
  return false;
}

void render_thread(std::string& out, const Process& process, const Thread& thread, const TextOptions& options,
                   SourceCache* sources, const Palette& colors) {
  const std::string id =
      thread.native_id != 0 ? fmt::format("{}", thread.native_id) : fmt::format("{:#x}", thread.thread_id);
  std::string state = render::thread_state_text(thread.state, thread.gil);
  // Sub-interpreters: which interpreter the thread state belongs to, and the link to the thread
  // state of another interpreter listed before it on the same OS thread.
  if (thread.interpreter_id > 0 || shares_os_thread(process, thread)) {
    if (thread.interpreter_id >= 0) {
      state += fmt::format("{}interpreter {}", state.empty() ? "" : ", ", thread.interpreter_id);
    }
    if (const Thread* earlier = earlier_on_same_os_thread(process, thread)) {
      state += state.empty() ? "" : ", ";
      state += earlier->interpreter_id >= 0
                   ? fmt::format("on the same OS thread as interpreter {}'s thread state above", earlier->interpreter_id)
                   : std::string("on the same OS thread as the thread state above");  // 3.6: no interpreter ids
    }
  }
  out += fmt::format("{}Thread {}{}{}{}\n", colors.header, id, state.empty() ? "" : " (" + state + ")",
                     thread.name.empty() ? "" : fmt::format(": \"{}\"", safe(thread.name)), colors.reset);
  for (const Frame& frame : thread.frames) render_frame(out, process, frame, options, sources, colors);
  if (thread.frames.empty() && !thread.truncated) out += "    (no Python frames)\n";
  if (thread.truncated) {
    const std::string reason = thread.truncation_reason.empty() ? "frame chain cut" : safe(thread.truncation_reason);
    out += fmt::format("    {}... truncated: {}{}\n", colors.warning, reason, colors.reset);
  }
  // --native: a stack that could not be merged follows its note, whole.
  if (!thread.native_note.empty()) {
    out += fmt::format("    {}... {}{}\n", colors.warning, safe(thread.native_note), colors.reset);
  }
  for (const Frame& frame : thread.native_frames) render_frame(out, process, frame, options, sources, colors);
}

}  // namespace

std::string render_text(const Process& process, const TextOptions& options, SourceCache* sources) {
  const Palette colors = render::palette_for(options.color);
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
