// Reading a live process for a program that reports on it (the pyframes command, `hangshim
// report`'s live stacks): the engine's read_process, plus the one question only
// hindsight answers. A read that failed or came back cut short because the target exited
// meanwhile is not a damaged target: it becomes one ProcessGone error.
#pragma once

#include <cstdint>

#include "pyframes/pyframes.h"

namespace pyframes {

// True when `pid` no longer runs: no such process, or a zombie waiting for its parent.
bool process_exited(int64_t pid);

// A failed or truncated result for a process that has exited since becomes ProcessGone.
Result<Process> explain_exit(int64_t pid, Result<Process> result, bool (*exited)(int64_t) = process_exited);

// read_process(pid, options) followed by explain_exit.
Result<Process> read_live_process(int64_t pid, const ReadOptions& options);

}  // namespace pyframes
