// Core files as a pyframes target: `gcore` dumps, kernel dumps (SIGABRT, SIGSEGV, ...) and
// gzip-compressed copies of either. The core's PT_LOAD segments are the memory; pages a core
// leaves out (code, read-only data, untouched file-backed data) are read from the files its
// NT_FILE note names, found on this machine directly, under --root, through --exe or in the
// --lib-search directories, and used only when their build-id matches the core's copy of their
// ELF headers. The core is never read into memory as a whole.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pyframes/memory.h"
#include "pyframes/model.h"
#include "pyframes/module_map.h"
#include "pyframes/pyframes.h"
#include "pyframes/result.h"

namespace pyframes {

struct CoreOptions {
  // The executable to use instead of the one the core names (--exe). Used even when its
  // build-id differs from the core's (with a warning): the user asked for it.
  std::optional<std::string> executable;
  // Directories searched, in order, for files the core names but that are not at their
  // original path (--lib-search): DIR/<base name>, then DIR/<full original path>.
  std::vector<std::string> lib_search;
  // Prefix for every path the core names (--root), e.g. /proc/PID/root of a container or the
  // directory a cluster node's file system was copied to. Empty: paths are used as they are.
  std::string root;
  ReadOptions read;  // passed to the engine; its resolve_file is replaced by the core's resolver
};

// The signal that ended the process (kernel cores; a `gcore` dump has none).
struct CoreSignal {
  int number = 0;
  int code = 0;              // si_code: SI_USER, SI_TKILL, SEGV_MAPERR, ...
  int error = 0;             // si_errno
  uint64_t address = 0;      // si_addr of SIGSEGV/SIGBUS/SIGILL/SIGFPE/SIGTRAP
  int64_t sender_pid = -1;   // si_pid for signals sent by kill/tgkill, -1 otherwise
  int64_t process_pid = 0;   // the dumped process, to tell abort()/raise() from a signal sent by another
  std::string name() const;  // "SIGABRT"; "signal 42" for numbers without a name
  // "SIGSEGV (SEGV_MAPERR at 0x0)", "SIGABRT (raised by the process itself)",
  // "SIGTERM (sent by kill from pid 12)"
  std::string describe() const;
};

// One thread of the dumped process (NT_PRSTATUS), with its registers for native unwinding.
struct CoreThread {
  int64_t tid = 0;
  int current_signal = 0;           // pr_cursig: the signal being delivered to this thread, 0 if none
  uint16_t machine = 0;             // ELF e_machine: EM_X86_64 (62) or EM_AARCH64 (183)
  std::vector<uint64_t> registers;  // general registers in the kernel's order (struct user_regs_struct)
  uint64_t pc = 0;                  // rip / pc
  uint64_t sp = 0;                  // rsp / sp
  uint64_t thread_pointer = 0;      // x86-64 fs_base (= pthread_self() with glibc), 0 where unknown
};

// What the core says about the process besides its memory.
struct CoreInfo {
  int64_t pid = 0;
  int64_t ppid = 0;
  uint16_t machine = 0;
  std::string executable;                 // path as the target saw it (NT_FILE mapping of AT_ENTRY)
  std::string short_name;                 // pr_fname: the kernel's 15-character comm
  std::vector<std::string> command_line;  // argv from the core's stack; pr_psargs (80 chars) if unreadable
  std::vector<std::string> environment;   // envp from the core's stack, empty if unreadable
  std::optional<CoreSignal> fatal_signal;
  std::vector<CoreThread> threads;  // the thread that received the fatal signal first
  uint64_t core_size = 0;           // bytes of (decompressed) core on disk
  uint64_t missing_bytes = 0;       // bytes the headers promise beyond the end of the file
  bool gzip = false;
};

// A file the core names for which no usable local copy was found.
struct UnusableFile {
  std::string path;         // as the core names it
  std::string other_build;  // a local file by that name whose build-id differs; empty when none was found
};

// An opened core: its memory, its module map and its notes. Reads only what is asked for.
class Core {
 public:
  static Result<std::unique_ptr<Core>> open(const std::string& path, const CoreOptions& options = {});
  ~Core();
  Core(const Core&) = delete;
  Core& operator=(const Core&) = delete;

  const std::string& path() const;
  const CoreInfo& info() const;
  const Memory& memory() const;
  const ModuleMap& modules() const;
  // Target path -> local path of a verified copy; empty when no usable copy exists (missing, or
  // its build-id differs). Safe to keep and call while this Core lives.
  FileResolver resolver() const;
  // Problems met so far: a truncated core, each missing or mismatching file (once, when the
  // first read needs it). Grows while the memory is read.
  std::vector<std::string> warnings() const;
  // Files that were needed but are missing or differ, for error messages.
  std::vector<UnusableFile> unusable_files() const;

 private:
  struct State;
  explicit Core(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// Opens the core, finds the interpreter, walks every thread. Process::source is `path`; pid,
// command_line, executable, fatal_signal, rank/local_rank (from the environment), warnings and
// the threads' native ids (matched through NT_PRSTATUS) are filled from the core.
Result<Process> read_core(const std::string& path, const CoreOptions& options = {});

// True when the file starts like a core pyframes can open (an ELF core, or gzip data); lets a
// CLI tell `pyframes 1234` from `pyframes core.1234` without guessing from the name.
bool looks_like_core(const std::string& path);

}  // namespace pyframes
