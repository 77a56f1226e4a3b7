// A CPython newer than pyframes knows (3.16+) is read with the newest _Py_DebugOffsets layout it
// knows. That is right as long as the newer version only added fields at the ends of sections
// and sections after the known ones; when a section moved, every offset after it is wrong. This
// check decides which, from the table itself and from the target's own memory, before a walk
// trusts the offsets:
//   - each section's size is plausible and every offset read for it lies inside it;
//   - the first interpreter's first thread state points back at that interpreter;
//   - the frames of its threads hold code objects (type "code") whose file names are str.
// Reads are bounded (threads, frames, a type name of 16 bytes), so a hostile target cannot make
// it spin. It only reads memory and the layout, so the shim's in-process reader can run it too.
#pragma once

#include <string>

#include "pyframes/layout.h"
#include "pyframes/memory.h"
#include "pyframes/result.h"
#include "pyframes/target.h"

namespace pyframes {

// What the check saw when it passed (for the note shown with the stacks).
struct NewerLayoutEvidence {
  int threads = 0;       // thread states whose frames were looked at
  int code_objects = 0;  // frames whose executable is a code object with a str file name
};

// Ok with the evidence, or an error saying which check failed (its text ends without a period,
// for the caller to place after "does not read as 3.15's: ").
Result<NewerLayoutEvidence> check_newer_layout(const Memory& memory, const PythonTarget& target,
                                               const Layout& layout);

}  // namespace pyframes
