// Names for the native frames a debugger sent along with a saved document (--merge-json
// --native: the gdb extension's `pyframes bt --native`) where it had none: gdb shows "??" for
// the evaluation loop's split-off part in a stripped interpreter, which --native's own
// symbolizer names (split_parts.h). The debugger sends the target's mappings with the frames
// (gdb's `info proc mappings`): the files they name are opened here, as for a core, and checked
// against the mappings (a file that does not match names nothing).
#pragma once

#include <vector>

#include "pyframes/model.h"
#include "pyframes/module_map.h"

namespace pyframes::native {

void name_carried_native_frames(Process& process, const std::vector<Mapping>& mappings);

}  // namespace pyframes::native
