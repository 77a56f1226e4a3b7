// The pyframes engine's entry points. A live process is read in one call; other memory sources
// (core files, the current process) use the same three steps: locate the runtime, pick a
// layout, walk. Every function is safe to call from several threads at once for different
// targets, and never writes to the target.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pyframes/memory.h"
#include "pyframes/model.h"
#include "pyframes/module_map.h"
#include "pyframes/result.h"
#include "pyframes/target.h"

namespace pyframes {

struct Layout;  // offsets and model flags of one CPython version (pyframes/layout.h)

struct ReadOptions {
  bool locals = false;          // fill Frame::locals with bounded reprs of arguments and locals
  bool globals = false;         // fill Frame::globals and Frame::builtins (module globals, builtins)
  bool lock = false;            // stop the target's threads for a consistent snapshot; always resumed
  size_t max_frames = 4096;     // per thread; deeper stacks are cut and marked truncated
  bool use_symbols = true;      // false: find the interpreter by scanning data only (tests the fallback)
  // Native (C/C++) frames, merged with the Python frames at the evaluation loop's frames. Live
  // processes are stopped for the read and the unwind (ptrace), like with `lock`.
  bool native = false;
  bool native_all = false;      // with `native`: also threads that have no Python thread state
  FileResolver resolve_file;    // target path -> local path; identity when empty
                                // (read_process defaults it to /proc/PID/root/<path>)
};

// Live process: discovery (/proc/PID/maps, ELF symbols, version), layout, walk; then what
// /proc adds (executable, command line, RANK/LOCAL_RANK, comm names for threads Python did
// not name, thread states from the kernel). Errors: NotFound (no such PID), ProcessGone, PermissionDenied
// (hint: how to get the right), NotPython (names the executable), UnsupportedVersion.
Result<Process> read_process(int64_t pid, const ReadOptions& options = {});

// The generic steps, for any memory source.
// Which module holds CPython, its version, and where its runtime is (symbols, else a scan of
// the module's writable data). Uses options.use_symbols and options.resolve_file.
Result<PythonTarget> locate_python(const Memory& memory, const ModuleMap& modules, const ReadOptions& options);
// The generated table for 3.6-3.13; for 3.13+ the target's own _Py_DebugOffsets on top.
Result<Layout> select_layout(const Memory& memory, const PythonTarget& target);
// Interpreters -> threads -> frames. Threads come oldest first; a thread whose frame chain is
// cut (cycle, unreadable or non-code frame, max_frames) keeps the frames read so far and has
// truncated + truncation_reason set; problems with the lists themselves go to warnings.
// Fills thread_id, native_id, name (threading), gil, state (HoldsGil or Unknown), frames.
Result<Process> read_stacks(const Memory& memory, const PythonTarget& target, const Layout& layout,
                            const ReadOptions& options);

}  // namespace pyframes
