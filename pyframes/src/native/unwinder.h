// Native unwinding with libunwind's remote API over pyframes' own memory sources: one
// unwinder for live processes (registers from ptrace, memory through process_vm_readv) and for
// cores (registers from NT_PRSTATUS, memory from the core and the files it names).
//
// Why not libunwind-ptrace / libunwind-coredump: _UPT reads memory a word per PTRACE_PEEKDATA
// and opens the files at the target's paths in our mount namespace (wrong for containers);
// _UCD opens the core itself (no gzip cores) and needs every file added by hand (--lib-search,
// --root and the build-id checks would be done twice). Our accessors find unwind tables the way
// libunwind's own do (.eh_frame_hdr's binary-search table, searched by
// dwarf_search_unwind_table, as perf does), so both kinds of target share one code path and the
// engine's file resolution.
#pragma once

#include <cstdint>
#include <memory>

#include "native/module_cache.h"
#include "native/native_stack.h"
#include "native/registers.h"
#include "pyframes/memory.h"

namespace pyframes::native {

class Unwinder {
 public:
  // `memory` must stay unchanged while the unwinder lives (a stopped process or a core): pages
  // are cached.
  Unwinder(const Memory& memory, ModuleCache& modules);
  ~Unwinder();
  Unwinder(const Unwinder&) = delete;
  Unwinder& operator=(const Unwinder&) = delete;

  // Unwinds from `registers`, at most `max_frames` frames.
  RawStack unwind(const Registers& registers, size_t max_frames);

  struct State;  // libunwind's address space and the accessors' data (unwinder.cpp)

 private:
  std::unique_ptr<State> state_;
};

}  // namespace pyframes::native
