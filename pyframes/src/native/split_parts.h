// The parts of a function that the compiler moved elsewhere. GCC puts a function's rarely run
// blocks into a separate part ("NAME.cold", in .text.unlikely) with its own unwind entry (FDE);
// a stripped file keeps the name of neither part's symbol for it, so a frame stopped there has
// no name. Debian's interpreters (3.11 and later) are built that way: in 3.14 and 3.15 almost
// all of _PyEval_EvalFrameDefault is its cold part, and without a name for it `--native`
// cannot find the evaluation loop's frames to merge at.
//
// A cold part is recognised by how it is entered: the function jumps (jmp/jcc rel32, not call)
// into the middle of it. No compiler jumps into the middle of another function, so an unwind
// range that the function's own code jumps into at two or more places, at least one of them
// past its start, is the function's split part.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "elf/elf_file.h"

namespace pyframes::native {

struct CodeRange {
  uint64_t start = 0;  // link-time addresses
  uint64_t end = 0;    // exclusive
};

// The unwind range (FDE) of `elf` that contains the link-time `address`, found through
// .eh_frame_hdr's sorted table; nullopt when there is none or the tables are malformed.
std::optional<CodeRange> unwind_range_at(const ElfFile& elf, uint64_t address);

// The split parts of the function at [start, start + size) (link-time addresses), found by
// its jumps as described above; empty when it has none (or the file has no unwind table).
std::vector<CodeRange> split_parts_of(const ElfFile& elf, uint64_t start, uint64_t size);

}  // namespace pyframes::native
