// read_core: a core through the engine's three steps, then what only a core knows (command
// line, fatal signal, native thread ids from NT_PRSTATUS) added to the model.
#include <fmt/format.h>

#include <algorithm>

#include "native/native_reader.h"
#include "pyframes/core.h"
#include "pyframes/layout.h"
#include "pyframes/thread_activity.h"
#include "walk/frame_chain.h"

namespace pyframes {

namespace {

std::string environment_value(const std::vector<std::string>& environment, const std::string& name) {
  std::string prefix = name + "=";
  for (const auto& entry : environment) {
    if (entry.compare(0, prefix.size(), prefix) == 0) return entry.substr(prefix.size());
  }
  return {};
}

// "/a/libpython3.12.so (missing), /a/python3.12 (another build at /b/python3.12)"
std::string describe(const std::vector<UnusableFile>& files) {
  std::string out;
  for (const auto& file : files) {
    out += fmt::format("{}{} ({})", out.empty() ? "" : ", ", file.path,
                       file.other_build.empty() ? "missing" : "another build at " + file.other_build);
  }
  return out;
}

// Python knows each thread's pthread_t (threading.get_ident()); on x86-64 glibc that is the
// thread pointer (fs_base) NT_PRSTATUS records, which gives the TID on versions whose thread
// state has no native id (before 3.11), and confirms it on the others.
void match_native_ids(Process& process, const std::vector<CoreThread>& threads) {
  for (auto& thread : process.threads) {
    if (thread.native_id != 0) continue;
    for (const auto& core_thread : threads) {
      if (core_thread.thread_pointer != 0 && core_thread.thread_pointer == thread.thread_id) {
        thread.native_id = core_thread.tid;
        break;
      }
    }
  }
}

// Threads whose frame chain runs into zeros (WalkStop::Zeroed): the core holds zeros where
// their stacks were. gdb 13's gcore writes a whole mapping as zeros when part of it cannot be
// read, and newer C libraries (glibc 2.43 here) put a thread stack's guard pages inside the
// stack's mapping, which ptrace cannot read; the kernel's own core writer skips just those pages.
std::optional<std::string> zeroed_stacks_warning(const Process& process) {
  std::string ids;
  const std::string zeroed = to_string(WalkStop::Zeroed);
  for (const auto& thread : process.threads) {
    if (thread.truncated && thread.truncation_reason == zeroed) {
      ids += fmt::format("{}{}", ids.empty() ? "" : ", ", thread.native_id != 0 ? thread.native_id : thread.thread_id);
    }
  }
  if (ids.empty()) return std::nullopt;
  return fmt::format(
      "the stacks of threads {} end in memory that is zeros in this core: the program that wrote it could not "
      "read it (gdb's gcore cannot read a thread stack with guard pages inside its mapping, as newer C libraries "
      "place them); a core the kernel writes holds it (ulimit -c unlimited, then kill -ABRT the process)",
      ids);
}

// A read that failed in a truncated core most likely hit the missing part: say so first.
Error truncation_error(const Core& core, Error error) {
  return make_error(ErrorKind::Truncated,
                    fmt::format("{} is truncated ({} bytes missing) and the Python state is not in what remains: {}",
                                core.path(), core.info().missing_bytes, error.message),
                    "the dump was cut short, e.g. by a full disk or ulimit -c; dump again");
}

Error explain_read_error(const Core& core, Error error) {
  if (core.info().missing_bytes > 0 && error.kind != ErrorKind::UnsupportedVersion) {
    return truncation_error(core, std::move(error));
  }
  return error;
}

// Why no interpreter was found, in the terms the user can act on.
Error explain_not_found(const Core& core, Error error) {
  const CoreInfo& info = core.info();
  std::vector<UnusableFile> unusable = core.unusable_files();
  if (unusable.size() == 1 && unusable.front().path == info.executable) {
    return make_error(
        ErrorKind::NotFound,
        fmt::format("{}: the executable {} is {}, and the Python state cannot be found without it", core.path(),
                    info.executable,
                    unusable.front().other_build.empty() ? "not on this machine"
                                                         : "another build at " + unusable.front().other_build),
        "pass --exe PATH to the program's file, or --lib-search DIR holding it");
  }
  if (!unusable.empty()) {
    return make_error(ErrorKind::NotFound,
                      fmt::format("{}: cannot find the Python runtime without files the core names: {}", core.path(),
                                  describe(unusable)),
                      "pass --lib-search DIR holding copies of them, --exe PATH for the program, or --root DIR for a "
                      "container's files");
  }
  if (info.missing_bytes > 0) return truncation_error(core, std::move(error));
  if (error.kind == ErrorKind::NotPython) {
    return make_error(ErrorKind::NotPython,
                      fmt::format("{}: no Python interpreter in this core (the process ran {})", core.path(),
                                  info.executable.empty() ? "an unknown program" : info.executable),
                      "pass the core of a Python process");
  }
  return error;
}

}  // namespace

Result<Process> read_core(const std::string& path, const CoreOptions& options) {
  PYFRAMES_TRY(core, Core::open(path, options));
  ReadOptions read = options.read;
  read.resolve_file = core->resolver();
  read.lock = false;  // nothing runs in a core

  auto target = locate_python(core->memory(), core->modules(), read);
  if (!target) return explain_not_found(*core, target.take_error());
  auto layout = select_layout(core->memory(), *target);
  if (!layout) return explain_read_error(*core, layout.take_error());
  auto stacks = read_stacks(core->memory(), *target, *layout, read);
  if (!stacks) return explain_read_error(*core, stacks.take_error());
  Process& process = *stacks;
  process.object_offsets = object_offsets(*layout);

  const CoreInfo& info = core->info();
  process.source = path;
  process.pid = info.pid;
  process.executable = info.executable;
  process.command_line = info.command_line;
  process.ppid = info.ppid;
  if (info.fatal_signal) process.fatal_signal = info.fatal_signal->describe();
  if (process.rank.empty()) process.rank = environment_value(info.environment, "RANK");
  if (process.local_rank.empty()) process.local_rank = environment_value(info.environment, "LOCAL_RANK");
  match_native_ids(process, info.threads);
  assign_thread_states(process);  // no kernel to ask: the GIL flag and the frames
  if (read.native) {
    native::NativeReader native(core->memory(), core->modules(), read.resolve_file, read);
    native.merge(process, native.unwind_core_threads(info.threads));
  }
  std::vector<std::string> warnings = core->warnings();
  warnings.insert(warnings.end(), process.warnings.begin(), process.warnings.end());
  if (auto zeroed = zeroed_stacks_warning(process)) warnings.push_back(*zeroed);
  process.warnings = std::move(warnings);
  return std::move(process);
}

}  // namespace pyframes
