// Reads several targets at once: one worker thread per target, at most `max_parallel` at a time.
// Reading a process is mostly waiting on the kernel (process_vm_readv, /proc), so this scales
// past the number of cores.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "pyframes/pyframes.h"

namespace pyframes {

using ProcessReader = std::function<Result<Process>(int64_t pid, const ReadOptions& options)>;

// Reads the index-th of several targets; called from several threads at once.
using IndexedReader = std::function<Result<Process>(size_t index)>;

// The default bound: enough to hide per-process latency, few enough to stay small.
size_t default_parallelism();

// One result per index 0..count-1, in index order. An exception `read` throws becomes that
// target's error instead of escaping.
std::vector<Result<Process>> read_in_parallel(size_t count, const IndexedReader& read, size_t max_parallel);

// One result per PID, in the order of `pids`. The reader may be called from several threads at
// once; an exception it throws becomes that PID's error instead of escaping.
std::vector<Result<Process>> read_processes(const std::vector<int64_t>& pids, const ReadOptions& options,
                                            const ProcessReader& reader, size_t max_parallel);

}  // namespace pyframes
