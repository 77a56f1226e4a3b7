// For the LD_PRELOAD shim: the innermost Python frames of a thread as raw (code object,
// instruction offset) pairs, cheap enough to take inside every NCCL call, and their resolution
// to names and lines once per new call-site. Works with any Memory; the shim passes one that
// reads its own process.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pyframes/layout.h"
#include "pyframes/memory.h"
#include "pyframes/model.h"
#include "pyframes/result.h"
#include "pyframes/target.h"

namespace pyframes {

// Trivial on purpose (no member initializers): the shim keeps an array of these on its stack
// at every NCCL call, and collect_code_locations fills what it returns; initializing all 65
// entries every call cost more than walking the frames. `CodeLocation{}` is all zeros.
struct CodeLocation {
  uint64_t code_object;        // PyCodeObject* in the target
  int32_t instruction_offset;  // bytes into its bytecode; -1 not started; INT32_MIN unknown
};

// Fills `out` with up to `capacity` frames of the thread state `tstate`, innermost first, and
// returns how many. No allocation, no system call other than Memory::read, never throws;
// garbage or cycles end the walk early.
size_t collect_code_locations(const Memory& memory, const Layout& layout, uint64_t tstate, CodeLocation* out,
                              size_t capacity) noexcept;

class SelfMemory;
// The same for the calling thread's own frames (`tstate` is the caller's), read in place where
// `memory` (Table mode) vouches for their pages: the shim's hot path, several times cheaper
// than going through Memory::read. The same answer as collect_code_locations over `memory`;
// a SelfMemory in Syscall mode is simply read through it.
// `walk_end`, if given, says where the walk ended, for record_own_frames: the last frame
// returned when `capacity` was reached, 0 when the walk reached the outermost frame,
// kWalkEndedEarly when it stopped at anything else (unreadable, a cycle, not code).
inline constexpr uint64_t kWalkEndedEarly = 1;  // never a frame address (frames are aligned)
size_t collect_own_code_locations(const SelfMemory& memory, const Layout& layout, uint64_t tstate,
                                  CodeLocation* out, size_t capacity, uint64_t* walk_end = nullptr) noexcept;

// What a walk of the caller's own frames read from the frames themselves (not from the code
// objects they run), so that the shim can tell at its next call, by reading just that, whether
// the walk would give the same answer: the same frames at the same addresses, running the same
// code objects at the same instructions. Those code objects are alive (the frames hold them)
// and the fields a walk reads from them never change. A fixed size: it lives per thread.
struct OwnFramesRecord {
  static constexpr size_t kMaxSteps = 24;  // deeper walks (many skipped frames) are not recorded
  struct Seen {
    uint64_t next;      // previous / f_back
    uint64_t code;      // executable / f_code
    uint64_t position;  // instr_ptr / f_lasti
    uint64_t owner;     // 3.11+: the frame's owner (0 otherwise)
  };
  uint64_t first;  // the innermost frame
  uint64_t last;   // where the walk ended (as walk_end above)
  uint32_t steps;  // frames in seen; 0: nothing recorded
  Seen seen[kMaxSteps];
};

// Records the frames of `tstate` (the caller's) through `walk_end` (from collect_own_code_locations);
// false (nothing recorded) when the chain is deeper than kMaxSteps, unreadable, `memory` is not
// in Table mode, or the interpreter is free-threaded (a frame's bytecode copy changes under it).
bool record_own_frames(const SelfMemory& memory, const Layout& layout, uint64_t tstate, uint64_t walk_end,
                       OwnFramesRecord* out) noexcept;
// True when the frames of `tstate` still read exactly as `record` holds them.
bool same_own_frames(const SelfMemory& memory, const Layout& layout, uint64_t tstate,
                     const OwnFramesRecord& record) noexcept;

// Function, qualname, file and line of one location (allocates; call once per new call-site).
Result<Frame> describe_code_location(const Memory& memory, const Layout& layout, CodeLocation location);

struct ThreadStateRef {
  uint64_t tstate = 0;     // PyThreadState*
  uint64_t thread_id = 0;  // pthread_t of the thread (threading.get_ident())
};

// The thread states of every interpreter, in list order (newest thread first: the main thread
// is usually last). Returns how many were written (at most `capacity`). No allocation.
size_t list_thread_states(const Memory& memory, const Layout& layout, const PythonTarget& target,
                          ThreadStateRef* out, size_t capacity) noexcept;

// The thread state whose thread_id is `thread_id` (pthread_self() of that thread), 0 if none.
uint64_t find_thread_state(const Memory& memory, const Layout& layout, const PythonTarget& target,
                           uint64_t thread_id) noexcept;

}  // namespace pyframes
