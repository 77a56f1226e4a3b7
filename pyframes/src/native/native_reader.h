// --native for one target: unwind every thread while the target cannot change (a stopped
// process, a core), then name the frames and merge them into the Python threads. Used by
// read_process and read_core; everything a dump opens (ELF files, symbol tables, libunwind's
// address space) lives as long as one NativeReader.
#pragma once

#include <sys/types.h>

#include <vector>

#include "native/module_cache.h"
#include "native/native_stack.h"
#include "native/symbolizer.h"
#include "native/unwinder.h"
#include "pyframes/core.h"
#include "pyframes/pyframes.h"

namespace pyframes::native {

class NativeReader {
 public:
  // `memory` and `modules` must outlive the reader.
  NativeReader(const Memory& memory, const ModuleMap& modules, FileResolver resolve, const ReadOptions& options);

  // Live: each of `tids` must be in a ptrace stop of the calling thread (ThreadLock).
  std::vector<RawStack> unwind_stopped_threads(const std::vector<pid_t>& tids);
  // Cores: from the registers NT_PRSTATUS recorded.
  std::vector<RawStack> unwind_core_threads(const std::vector<CoreThread>& threads);

  // Names the frames and merges them into `process` (for a live process: after it runs again).
  void merge(Process& process, const std::vector<RawStack>& stacks);

 private:
  ModuleCache modules_;
  Unwinder unwinder_;
  Symbolizer symbolizer_;
  size_t max_frames_;
  bool all_threads_;
};

}  // namespace pyframes::native
