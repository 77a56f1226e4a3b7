// The core-file reader on hostile cores: the ELF header and program headers, the notes
// (NT_PRSTATUS, NT_PRPSINFO, NT_SIGINFO, NT_FILE, NT_AUXV), the initial stack (argv, envp),
// gzip inflation, the memory built from PT_LOAD segments and the files NT_FILE names, and the
// whole read_core with locals. Seeds are real cores (gcore and kernel dumps, scripts/fuzz.sh).
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"
#include "pyframes/core.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::InputFile input(data, size);
  if (!input.ok()) return 0;
  (void)pyframes::looks_like_core(input.path());
  if (auto core = pyframes::Core::open(input.path())) {
    const pyframes::CoreInfo& info = (*core)->info();
    if (info.fatal_signal) (void)info.fatal_signal->describe();
    // Reads at the places a walker starts from: the threads' stacks and the mapped files.
    uint64_t word = 0;
    for (const auto& thread : info.threads) (void)(*core)->memory().read(thread.sp, &word, sizeof word);
    for (const auto& mapping : (*core)->modules().mappings()) (void)(*core)->memory().read(mapping.start, &word, sizeof word);
    (void)(*core)->warnings();
    (void)(*core)->unusable_files();
  }
  pyframes::CoreOptions options;
  options.read.locals = true;
  options.read.globals = true;
  auto process = pyframes::read_core(input.path(), options);
  (void)process;
  return 0;
}
