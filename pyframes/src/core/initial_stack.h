// argv and envp from the core. NT_PRPSINFO keeps only the first 80 bytes of the command line,
// so the full one is recovered from the initial stack the kernel built at exec: the auxiliary
// vector (whose exact bytes NT_AUXV repeats) is preceded by envp[], NULL, argv[], NULL... and
// argc. Finding the NT_AUXV bytes in the stack segment anchors the walk back to argc.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/core_file.h"
#include "core/core_notes.h"
#include "pyframes/memory.h"

namespace pyframes::core {

struct InitialStack {
  std::vector<std::string> argv;
  std::vector<std::string> envp;
};

// `memory` reads the core's own bytes. nullopt when the stack or the vector is not in the core.
std::optional<InitialStack> read_initial_stack(const Memory& memory, const CoreFile& core, const Note& auxv_note);

// Splits pr_psargs, the fallback: arguments containing spaces cannot be told apart there.
std::vector<std::string> split_psargs(const std::string& psargs);

}  // namespace pyframes::core
