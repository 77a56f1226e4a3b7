// The whole `pyframes` command as a function of its arguments, its terminal and a process
// reader, so that tests run it without real targets; cli/main.cpp only supplies the real ones.
#pragma once

#include <string>
#include <type_traits>
#include <string_view>
#include <vector>

#include "pyframes/parallel_read.h"
#include "pyframes/core.h"

namespace pyframes::cli {

// Exit statuses shared by the hangshim CLIs.
inline constexpr int kExitOk = 0;
inline constexpr int kExitTargetProblem = 1;
inline constexpr int kExitUsage = 2;

struct Terminal {
  bool stdout_is_tty = false;
  bool no_color = false;  // NO_COLOR is set to a non-empty value
};

struct Output {
  std::string out;  // for stdout
  std::string err;  // for stderr: one line per failed target or truncated thread
};

using CoreReader = std::function<Result<Process>(const std::string& path, const CoreOptions& options)>;

// How targets are read: live processes through `process`, core files through `core`.
struct Readers {
  // Implicit from any process-reading callable, so tests that only read PIDs pass just that.
  template <class F>
    requires std::is_invocable_r_v<Result<Process>, F, int64_t, const ReadOptions&>
  Readers(F&& process_reader, CoreReader core_reader = read_core)  // NOLINT: implicit by design
      : process(std::forward<F>(process_reader)), core(std::move(core_reader)) {}
  ProcessReader process;
  CoreReader core;
};

struct Sources;  // how --children, --pgrep and --merge-json find their targets (job_targets.h)

// Runs `pyframes args...` (args exclude the program name) and returns the exit status.
// `sources` defaults to the live machine (/proc, the file system).
int run_pyframes(const std::vector<std::string>& args, const Terminal& terminal, const Readers& readers,
                 std::string_view version, Output& output, const Sources* sources = nullptr);

}  // namespace pyframes::cli
