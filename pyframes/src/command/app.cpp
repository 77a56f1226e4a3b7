#include "command/app.h"

#include <algorithm>

#include <fmt/format.h>

#include "command/job_targets.h"
#include "command/options.h"
#include "native/merge_native.h"
#include "pyframes/rank_workers.h"
#include "pyframes/merge.h"
#include "pyframes/render.h"
#include "walk/frame_chain.h"

namespace pyframes::cli {

namespace {

constexpr const char* kProgram = "pyframes";

std::string thread_label(const Thread& thread, size_t index) {
  if (thread.native_id != 0) return fmt::format("{}", thread.native_id);
  if (thread.thread_id != 0) return fmt::format("{:#x}", thread.thread_id);
  return fmt::format("#{}", index + 1);
}

// A cut frame chain is reported like a failed read, one line per process: the output is
// incomplete, and scripts must be able to tell.
void report_truncation(const Process& process, const Target& target, Output& output) {
  std::vector<size_t> cut;
  for (size_t i = 0; i < process.threads.size(); ++i) {
    if (process.threads[i].truncated) cut.push_back(i);
  }
  if (cut.empty()) return;
  const Thread& first = process.threads[cut.front()];
  std::string why = fmt::format("stack of thread {} truncated after {} frames: {}", thread_label(first, cut.front()),
                                first.frames.size(),
                                first.truncation_reason.empty() ? "frame chain cut" : first.truncation_reason);
  if (cut.size() > 1) why += fmt::format("; {} more threads truncated", cut.size() - 1);
  // A core does not change while it is read: its chain is cut where its writer left it.
  std::string hint;
  if (target.is_core()) {
    hint = first.truncation_reason == to_string(WalkStop::Zeroed)
               ? "the program that wrote the core could not read that stack; let the kernel write the core "
                 "(ulimit -c unlimited, then kill -ABRT the process)"
               : "the core was written while the thread changed its frames, or its memory is damaged";
  }
  output.err += format_error_line(kProgram, target.name(), make_error(ErrorKind::Corrupt, why, hint)) + "\n";
}

bool has_truncation(const Process& process) {
  for (const Thread& thread : process.threads) {
    if (thread.truncated) return true;
  }
  return false;
}

// --merge-json --native: threads that carry native frames unwound elsewhere (a debugger's:
// "native_frames", innermost first, "native_note" saying why the unwind stopped) and no native
// frames among their Python ones get them merged by --native's own rule, so the rule exists once
// (the gdb extension's `pyframes bt --native` sends gdb's frames this way).
void merge_carried_native_frames(std::vector<Process>& processes) {
  for (Process& process : processes) {
    for (Thread& thread : process.threads) {
      if (thread.native_frames.empty()) continue;
      bool merged_already = std::any_of(thread.frames.begin(), thread.frames.end(),
                                        [](const Frame& f) { return f.kind == Frame::Kind::Native; });
      if (merged_already) continue;
      native::NativeStack stack;
      stack.tid = thread.native_id;
      stack.frames = std::move(thread.native_frames);
      stack.problem = std::move(thread.native_note);
      thread.native_frames.clear();
      thread.native_note.clear();
      for (Frame& frame : stack.frames) frame.kind = Frame::Kind::Native;
      native::merge_native_stack(thread, std::move(stack));
    }
  }
}

bool merged_view(const Options& options, size_t processes) {
  if (options.merge != MergeMode::Auto) return options.merge == MergeMode::Always;
  return options.from_json || processes > 1;
}

}  // namespace

int run_pyframes(const std::vector<std::string>& args, const Terminal& terminal, const Readers& readers,
                 std::string_view version, Output& output, const Sources* sources) {
  auto parsed = parse_options(args);
  if (!parsed) {
    output.err += format_error_line(kProgram, "usage", parsed.error()) + "\n";
    return kExitUsage;
  }
  const Options& options = *parsed;
  if (options.action == Action::Help) {
    output.out += help_text();
    return kExitOk;
  }
  if (options.action == Action::Version) {
    output.out += version_text(version);
    return kExitOk;
  }

  const Sources live = live_sources();
  if (sources == nullptr) sources = &live;
  int status = kExitOk;
  std::vector<Process> processes;
  std::vector<FailedTarget> failures;
  if (options.from_json) {
    status = load_json_dumps(options.json_files, *sources, processes, failures, output);
    if (options.native) merge_carried_native_frames(processes);
  }

  const Selection selection = select_targets(options, *sources, output);
  if (selection.status == kExitUsage) return kExitUsage;  // a bad --pgrep pattern: nothing read
  if (selection.status != kExitOk) status = selection.status;
  CoreOptions core_options;
  core_options.read.lock = options.lock;
  core_options.read.locals = options.locals;
  core_options.read.globals = options.globals;
  core_options.read.native = options.native;
  core_options.read.native_all = options.native_all;
  if (!options.core_executable.empty()) core_options.executable = options.core_executable;
  core_options.lib_search = options.lib_search;
  core_options.root = options.root;
  const std::vector<Target>& targets = selection.targets;
  std::vector<Result<Process>> results = read_in_parallel(
      targets.size(),
      [&](size_t i) {
        return targets[i].is_core() ? readers.core(targets[i].core_path, core_options)
                                    : readers.process(targets[i].pid, core_options.read);
      },
      default_parallelism());

  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i]) {
      Process& process = results[i].value();
      if (process.pid == 0) process.pid = targets[i].pid;
      report_truncation(process, targets[i], output);
      if (has_truncation(process)) status = kExitTargetProblem;
      processes.push_back(std::move(process));
    } else if (!(selection.found[i] && quietly_skipped(results[i].error()))) {
      const Error& error = results[i].error();
      output.err += format_error_line(kProgram, targets[i].name(), error) + "\n";
      failures.push_back(FailedTarget{targets[i].pid, targets[i].name(), error});
      status = kExitTargetProblem;
    }
  }
  mark_rank_workers(processes);  // cores and saved documents; live reads asked /proc already
  if (processes.empty() && failures.empty() && status == kExitOk) {
    output.err += format_error_line(kProgram, "selection",
                                    make_error(ErrorKind::NotFound, "no Python process found",
                                               "check the launcher PID (pstree -p PID) or the pattern (pgrep -af PATTERN)")) +
                  "\n";
    status = kExitTargetProblem;
  }

  if (merged_view(options, processes.size())) {
    MergeOptions merge_options;
    merge_options.all_threads = options.all_threads;
    merge_options.hide_idle = options.hide_idle;
    merge_options.native_threads = options.native_all;
    const MergedStacks merged = merge_stacks(processes, merge_options);
    if (options.json) {
      if (options.hide_idle) hide_idle_threads(processes);
      output.out += render_merged_json(processes, merged, failures, !options.from_json);
    } else if (!processes.empty()) {
      TextOptions text_options;
      text_options.color = terminal.stdout_is_tty && !terminal.no_color;
      SourceCache source_cache;
      output.out += render_merged_text(merged, text_options, &source_cache);
    }
    return status;
  }
  const size_t hidden = options.hide_idle ? hide_idle_threads(processes) : 0;
  if (options.json) {
    output.out += render_json(processes, failures);
  } else {
    TextOptions text_options;
    text_options.color = terminal.stdout_is_tty && !terminal.no_color;
    SourceCache source_cache;
    for (size_t i = 0; i < processes.size(); ++i) {
      if (i > 0) output.out += '\n';
      output.out += render_text(processes[i], text_options, &source_cache);
    }
    if (hidden > 0) {
      output.out += fmt::format("\n{} idle {} hidden (--hide-idle; main threads and threads in a collective stay)\n",
                                hidden, hidden == 1 ? "thread" : "threads");
    }
  }
  return status;
}

}  // namespace pyframes::cli
