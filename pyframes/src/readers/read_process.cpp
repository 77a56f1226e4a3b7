// read_process: a live process in one call. Reads /proc/PID/maps, locates CPython, picks the
// layout, optionally stops the threads (--lock; --native, which unwinds them while stopped),
// walks, and adds what /proc knows.
#include <signal.h>

#include <fmt/format.h>

#include <optional>
#include <tuple>

#include "memory/process_memory.h"
#include "pyframes/proc_maps.h"
#include "native/native_reader.h"
#include "process/proc_info.h"
#include "pyframes/rank_workers.h"
#include "process/thread_lock.h"
#include "pyframes/layout.h"
#include "pyframes/pyframes.h"
#include "pyframes/thread_activity.h"
#include "activity/gil_locks.h"

namespace pyframes {

Result<Process> read_process(int64_t pid_value, const ReadOptions& options) {
  if (pid_value <= 0 || pid_value > (1 << 22)) {
    return make_error(ErrorKind::Usage, fmt::format("{} is not a process id", pid_value), "pass a positive PID");
  }
  auto pid = static_cast<pid_t>(pid_value);
  if (::kill(pid, 0) != 0 && errno == ESRCH) {
    return make_error(ErrorKind::NotFound, fmt::format("no process {}", pid), "check the PID (ps -e | grep python)");
  }
  auto modules = read_proc_maps(pid);
  if (!modules) return modules.take_error();

  ReadOptions effective = options;
  if (!effective.resolve_file) effective.resolve_file = proc_root_resolver(pid);
  ProcessMemory memory(pid);

  // What each thread is blocked in, seen before the walk and before --lock stops the threads.
  const auto kernel_states = read_kernel_thread_states(pid);

  std::optional<ThreadLock> lock;
  if (options.lock) {
    auto acquired = ThreadLock::acquire(pid);
    if (!acquired) return acquired.take_error();
    lock.emplace(std::move(acquired.value()));
  }

  auto target = locate_python(memory, *modules, effective);
  if (!target) return target.take_error();
  auto layout = select_layout(memory, *target);
  if (!layout) return layout.take_error();

  // --native: the threads are stopped only now, after discovery, for the walk and the unwind;
  // names are looked up after they run again.
  std::optional<ProcessMemory> unwind_memory;  // uncached: the unwinder caches pages itself
  std::optional<native::NativeReader> native;
  std::vector<native::RawStack> native_stacks;
  if (options.native) {
    if (!lock) {
      auto acquired = ThreadLock::acquire(pid, "--native");
      if (!acquired) return acquired.take_error();
      lock.emplace(std::move(acquired.value()));
      memory.clear_cache();  // pages read while the target ran
    }
    unwind_memory.emplace(pid, /*cache=*/false);
    native.emplace(*unwind_memory, *modules, effective.resolve_file, effective);
  }
  auto process = read_stacks(memory, *target, *layout, effective);
  if (native && process) native_stacks = native->unwind_stopped_threads(lock->thread_ids());
  lock.reset();  // resume the target before the slower /proc reads
  if (!process) return process.take_error();
  if (native) native->merge(*process, native_stacks);

  process->object_offsets = object_offsets(*layout);
  process->pid = pid;
  process->source = fmt::format("pid {}", pid);
  process->executable = proc_executable(pid);
  process->command_line = proc_command_line(pid);
  std::tie(process->rank, process->local_rank) = proc_rank_and_local_rank(pid);
  process->ppid = proc_parent(pid).value_or(0);
  process->worker_of = live_rank_owner(RankIdentity{process->ppid, process->rank, process->local_rank, process->executable});
  add_proc_thread_details(pid, *process);
  assign_thread_states(*process, kernel_states,
                       gil_lock_ranges(memory, *modules, *target, *layout, effective.resolve_file));
  return process;
}

}  // namespace pyframes
