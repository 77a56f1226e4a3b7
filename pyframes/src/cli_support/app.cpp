#include "cli_support/app.h"

#include <fmt/format.h>

#include "cli_support/options.h"
#include "pyframes/render.h"

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
  output.err += format_error_line(kProgram, target.name(), make_error(ErrorKind::Corrupt, why)) + "\n";
}

bool has_truncation(const Process& process) {
  for (const Thread& thread : process.threads) {
    if (thread.truncated) return true;
  }
  return false;
}

}  // namespace

int run_pyframes(const std::vector<std::string>& args, const Terminal& terminal, const Readers& readers,
                 std::string_view version, Output& output) {
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

  CoreOptions core_options;
  core_options.read.lock = options.lock;
  if (!options.core_executable.empty()) core_options.executable = options.core_executable;
  core_options.lib_search = options.lib_search;
  core_options.root = options.root;
  const std::vector<Target>& targets = options.targets;
  std::vector<Result<Process>> results = read_in_parallel(
      targets.size(),
      [&](size_t i) {
        return targets[i].is_core() ? readers.core(targets[i].core_path, core_options)
                                    : readers.process(targets[i].pid, core_options.read);
      },
      default_parallelism());

  int status = kExitOk;
  std::vector<Process> processes;
  std::vector<FailedTarget> failures;
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i]) {
      Process& process = results[i].value();
      if (process.pid == 0) process.pid = targets[i].pid;
      report_truncation(process, targets[i], output);
      if (has_truncation(process)) status = kExitTargetProblem;
      processes.push_back(std::move(process));
    } else {
      const Error& error = results[i].error();
      output.err += format_error_line(kProgram, targets[i].name(), error) + "\n";
      failures.push_back(FailedTarget{targets[i].pid, targets[i].name(), error});
      status = kExitTargetProblem;
    }
  }

  if (options.json) {
    output.out += render_json(processes, failures);
  } else {
    TextOptions text_options;
    text_options.color = terminal.stdout_is_tty && !terminal.no_color;
    SourceCache sources;
    for (size_t i = 0; i < processes.size(); ++i) {
      if (i > 0) output.out += '\n';
      output.out += render_text(processes[i], text_options, &sources);
    }
  }
  return status;
}

}  // namespace pyframes::cli
