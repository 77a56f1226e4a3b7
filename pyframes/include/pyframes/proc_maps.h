// The module map of a live process, parsed from /proc/PID/maps, and the way to open the files it
// names from here: through /proc/PID/root when the target lives in another mount namespace
// (a container), else by the path as printed.
#pragma once

#include <sys/types.h>

#include <string>

#include "pyframes/module_map.h"
#include "pyframes/result.h"

namespace pyframes {

// Parses the text of a maps file (exposed for tests; "(deleted)" suffixes are kept out of paths).
std::vector<Mapping> parse_proc_maps(const std::string& text);

Result<ModuleMap> read_proc_maps(pid_t pid);

// A FileResolver that prefers /proc/PID/root/<path> when that file exists and is not the same
// as <path> would be anyway; falls back to the path itself.
FileResolver proc_root_resolver(pid_t pid);

}  // namespace pyframes
