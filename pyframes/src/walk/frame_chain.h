// The innermost-first walk over one thread's Python frames, for every frame model:
//   <= 3.10  PyFrameObject chain (tstate->frame, f_back), f_lasti in the frame
//   3.11+    _PyInterpreterFrame chain (tstate->cframe->current_frame in 3.11/3.12,
//            tstate->current_frame from 3.13), skipping C-stack shim frames (3.12+) and frames
//            that have not started yet, instruction pointer -> byte offset into the bytecode.
// Header-only and allocation-free: the LD_PRELOAD shim runs it inside NCCL calls with a
// memcpy-based Memory. Every pointer is validated; a cycle (Brent's algorithm, no memory
// needed), a non-code object or an unreadable frame ends the walk with a reason.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <utility>

#include "pyframes/layout.h"
#include "pyframes/memory.h"

namespace pyframes {

// RawFrame::instruction_offset when the instruction pointer is outside the code object.
inline constexpr int32_t kUnknownOffset = INT32_MIN;

struct RawFrame {
  uint64_t frame = 0;              // address of the frame (PyFrameObject or _PyInterpreterFrame)
  uint64_t code = 0;               // PyCodeObject*
  // Bytes into the bytecode; -1 when the frame has not started (its line is co_firstlineno),
  // kUnknownOffset when the instruction pointer makes no sense (line unknown).
  int32_t instruction_offset = -1;
  bool is_entry = false;           // first frame of an evaluation-loop call
};

enum class WalkStop : uint8_t {
  End,         // reached the outermost frame
  Limit,       // max_frames reached
  Cycle,       // the chain loops
  Unreadable,  // a frame or its fields could not be read
  NotCode,     // a frame's code pointer is not a code object
  Zeroed,      // a frame's header is all zeros: in a core, memory its writer could not read
  Stopped,     // the visitor asked to stop
};

const char* to_string(WalkStop stop);

// Caches the address of the `code` type after the first successful check (PyCode_Type is a
// static object: one address per process), so later checks cost one read.
class CodeTypeCheck {
 public:
  CodeTypeCheck() = default;
  // Starts from a type an earlier check of the same process found (0: none).
  explicit CodeTypeCheck(uint64_t known_code_type) noexcept : code_type_(known_code_type) {}
  uint64_t code_type() const noexcept { return code_type_; }

  template <class Mem>
  bool is_code(const Mem& memory, const Layout& layout, uint64_t object) noexcept {
    if (object == 0 || (object & 7) != 0) return false;
    uint64_t type = 0;
    if (memory.read(object + static_cast<uint64_t>(layout.object.ob_type), &type, 8) != ReadStatus::Ok) return false;
    return is_code_type(memory, layout, type);
  }

  // The same check for an object whose ob_type the caller has read already.
  template <class Mem>
  __attribute__((always_inline)) bool is_code_type(const Mem& memory, const Layout& layout, uint64_t type) noexcept {
    return type != 0 && (type == code_type_ || learn_code_type(memory, layout, type));
  }

 private:
  // The first check: is `type` the type named "code"? (Out of line: once per walk.)
  template <class Mem>
  __attribute__((noinline)) bool learn_code_type(const Mem& memory, const Layout& layout, uint64_t type) noexcept {
    uint64_t name_ptr = 0;
    char name[5];
    if (memory.read(type + static_cast<uint64_t>(layout.type.tp_name), &name_ptr, 8) != ReadStatus::Ok) return false;
    if (name_ptr == 0 || memory.read(name_ptr, name, sizeof name) != ReadStatus::Ok) return false;
    if (std::memcmp(name, "code", 5) != 0) return false;
    code_type_ = type;
    return true;
  }

  uint64_t code_type_ = 0;
};

// The fields of one struct the walk needs, read with one Memory::read when they lie close
// together (they do in every CPython: a frame's header fields within 80 bytes, a code object's
// within 200), field by field otherwise. The shim walks its own stack at every NCCL call:
// one read per struct instead of one per field halves the cost of a call-site.
class FieldBlock {
 public:
  static constexpr int64_t kMaxSpan = 256;

  // `fields`: (offset, size) pairs; offsets < 0 (absent in this version) are ignored.
  FieldBlock(std::initializer_list<std::pair<int64_t, int>> fields) noexcept {
    for (const auto& [offset, size] : fields) {
      if (offset < 0) continue;
      low_ = low_ < 0 ? offset : std::min(low_, offset);
      high_ = std::max(high_, offset + size);
    }
    single_ = low_ >= 0 && high_ - low_ <= kMaxSpan;
  }

  // Reads the block at `base` (one read when single); false if it could not be read. A
  // memory that can vouch for a range and hand out a pointer to it (OwnFramesMemory: the
  // shim's own frames) is read in place instead of copied.
  // Inlined: the callers' offsets and sizes are then constants, each get() one move.
  template <class Mem>
  __attribute__((always_inline)) bool load(const Mem& memory, uint64_t base) noexcept {
    base_ = base;
    if (!single_) return true;
    if constexpr (requires { memory.direct(base, size_t{1}); }) {
      direct_ = static_cast<const unsigned char*>(
          memory.direct(base + static_cast<uint64_t>(low_), static_cast<size_t>(high_ - low_)));
      return direct_ != nullptr;
    } else {
      return memory.read(base + static_cast<uint64_t>(low_), bytes_, static_cast<size_t>(high_ - low_)) ==
             ReadStatus::Ok;
    }
  }

  // One field (its offset must be one of the block's when single): false if unreadable.
  template <class Mem>
  __attribute__((always_inline)) bool get(const Mem& memory, int64_t offset, void* out, size_t size) const noexcept {
    if (offset < 0) return false;
    if (single_ && offset >= low_ && offset + static_cast<int64_t>(size) <= high_) {
      std::memcpy(out, (direct_ != nullptr ? direct_ : bytes_) + (offset - low_), size);
      return true;
    }
    return memory.read(base_ + static_cast<uint64_t>(offset), out, size) == ReadStatus::Ok;
  }

 private:
  int64_t low_ = -1;
  int64_t high_ = 0;
  bool single_ = false;
  uint64_t base_ = 0;
  const unsigned char* direct_ = nullptr;  // the block in place (a direct memory), else bytes_
  unsigned char bytes_[kMaxSpan];
};

// Detects a cycle in a linked list in O(1) memory (Brent): call step() with each node.
class CycleDetector {
 public:
  bool seen_again(uint64_t node) noexcept {
    if (node == anchor_) return true;
    if (++steps_ == power_) {
      anchor_ = node;
      power_ *= 2;
      steps_ = 0;
    }
    return false;
  }

 private:
  uint64_t anchor_ = UINT64_MAX;
  uint64_t power_ = 1;
  uint64_t steps_ = 0;
};

// The innermost frame pointer of a thread state (0 when the thread runs no Python code).
template <class Mem>
inline ReadStatus first_frame(const Mem& memory, const Layout& layout, uint64_t tstate, uint64_t* frame) noexcept {
  *frame = 0;
  if (layout.thread_state.frame >= 0) {
    return memory.read(tstate + static_cast<uint64_t>(layout.thread_state.frame), frame, 8);
  }
  uint64_t cframe = 0;
  ReadStatus status = memory.read(tstate + static_cast<uint64_t>(layout.thread_state.cframe), &cframe, 8);
  if (status != ReadStatus::Ok || cframe == 0) return status;
  return memory.read(cframe + static_cast<uint64_t>(layout.cframe.current_frame), frame, 8);
}

// Free-threaded 3.14+: a thread runs its own copy of a code object's bytecode once it
// specializes it, so instr_ptr points into entry `copy` of the code's _PyCodeArray
// {Py_ssize_t size; char *entries[]} (entry 0 is the code object's own co_code_adaptive). An
// unreadable or out-of-range array leaves `fallback`, and the offset check then calls the
// instruction unknown rather than misplacing it.
template <class Mem>
inline uint64_t thread_bytecode(const Mem& memory, uint64_t copies, int32_t copy, uint64_t fallback) noexcept {
  if (copy == 0 || copies == 0 || (copies & 7) != 0 || copy < 0) return fallback;
  int64_t size = 0;
  uint64_t entry = 0;
  if (memory.read(copies, &size, 8) != ReadStatus::Ok || copy >= size ||
      memory.read(copies + 8 + 8 * static_cast<uint64_t>(copy), &entry, 8) != ReadStatus::Ok || entry == 0) {
    return fallback;
  }
  return entry;
}

// Calls visit(const RawFrame&) -> bool (false = stop) for each Python frame, innermost first.
// `Mem` is a Memory, or a final reader with the same read() whose calls the compiler can inline
// (the shim's hot path, callsite.cpp).
template <class Mem, class Visitor>
WalkStop walk_frames(const Mem& memory, const Layout& layout, uint64_t tstate, size_t max_frames,
                     CodeTypeCheck& code_check, Visitor&& visit) noexcept {
  uint64_t frame = 0;
  if (first_frame(memory, layout, tstate, &frame) != ReadStatus::Ok) return WalkStop::Unreadable;
  CycleDetector cycle;
  size_t visited = 0;
  // Every pointer-chasing step counts against a bound (shim frames too), so a garbage chain
  // ends even when it never yields a Python frame.
  size_t steps = 0;
  const size_t max_steps = max_frames * 2 + 16;
  // 3.11+: a frame's header and its code object's header, one read each per frame.
  const auto& fl = layout.interpreter_frame;
  FieldBlock header(
      {{fl.owner, 1}, {fl.previous, 8}, {fl.executable, 8}, {fl.instr_ptr, 8}, {fl.is_entry, 1}, {fl.tlbc_index, 4}});
  FieldBlock code_header({{layout.object.ob_type, 8},
                          {layout.object.ob_size, 8},
                          {layout.code.firsttraceable, 4},
                          {layout.code.tlbc, 8}});
  while (frame != 0) {
    if ((frame & 7) != 0) return WalkStop::Unreadable;
    if (cycle.seen_again(frame)) return WalkStop::Cycle;
    if (visited >= max_frames || ++steps > max_steps) return WalkStop::Limit;
    RawFrame raw;
    raw.frame = frame;
    uint64_t next = 0;
    if (layout.frame_model == FrameModel::FrameObject) {
      const auto& f = layout.frame_object;
      int32_t lasti = 0;
      if (memory.read(frame + static_cast<uint64_t>(f.code), &raw.code, 8) != ReadStatus::Ok ||
          memory.read(frame + static_cast<uint64_t>(f.lasti), &lasti, 4) != ReadStatus::Ok ||
          memory.read(frame + static_cast<uint64_t>(f.back), &next, 8) != ReadStatus::Ok) {
        return WalkStop::Unreadable;
      }
      if (!code_check.is_code(memory, layout, raw.code)) return WalkStop::NotCode;
      // f_lasti comes from the target: one too large to double is no known offset, not an overflow.
      raw.instruction_offset = lasti < 0                    ? -1
                               : !layout.lasti_in_code_units ? lasti
                               : lasti > INT32_MAX / 2       ? kUnknownOffset
                                                             : lasti * 2;
      raw.is_entry = true;  // every PyFrameObject runs in its own _PyEval_EvalFrameDefault call
    } else {
      const auto& f = layout.interpreter_frame;
      uint8_t owner = 0;
      uint64_t executable = 0, instr = 0;
      if (!header.load(memory, frame) || !header.get(memory, f.owner, &owner, 1) ||
          !header.get(memory, f.previous, &next, 8)) {
        return WalkStop::Unreadable;
      }
      if (f.owner_shim >= 0 && owner >= f.owner_shim) {  // a C-stack shim frame, not Python code
        frame = next;
        continue;
      }
      if (!header.get(memory, f.executable, &executable, 8) || !header.get(memory, f.instr_ptr, &instr, 8)) {
        return WalkStop::Unreadable;
      }
      // No frame has a null executable (3.14's entry frames hold None), so a header of zeros
      // is memory that was never this frame: in a core, a stack its writer wrote as zeros.
      if (executable == 0 && instr == 0 && next == 0) return WalkStop::Zeroed;
      raw.code = executable & ~layout.stackref_tag_mask;
      uint64_t code_type = 0;
      if (raw.code == 0 || (raw.code & 7) != 0 || !code_header.load(memory, raw.code) ||
          !code_header.get(memory, layout.object.ob_type, &code_type, 8) ||
          !code_check.is_code_type(memory, layout, code_type)) {
        return WalkStop::NotCode;
      }
      uint64_t bytecode = raw.code + static_cast<uint64_t>(layout.code.code_adaptive);
      if (fl.tlbc_index >= 0 && layout.code.tlbc >= 0) {
        int32_t copy = 0;
        uint64_t copies = 0;
        header.get(memory, fl.tlbc_index, &copy, 4);
        code_header.get(memory, layout.code.tlbc, &copies, 8);
        bytecode = thread_bytecode(memory, copies, copy, bytecode);
      }
      int64_t code_units = 0;  // PyCodeObject is a PyVarObject: ob_size counts code units
      code_header.get(memory, layout.object.ob_size, &code_units, 8);
      int64_t offset = static_cast<int64_t>(instr - bytecode);
      // ob_size comes from the target: a garbage one must not overflow the bound (offsets are
      // int32 in the model; CPython's code objects are far below 2^30 units).
      bool in_range = instr >= bytecode - 2 && code_units > 0 && code_units < (int64_t{1} << 30) && offset < code_units * 2;
      raw.instruction_offset = !in_range ? kUnknownOffset : offset < 0 ? -1 : static_cast<int32_t>(offset);
      if (layout.code.firsttraceable >= 0 && owner != f.owner_generator && in_range) {
        // A frame still copying its arguments and cells (before RESUME) is not shown by
        // CPython either (_PyFrame_IsIncomplete).
        int32_t first_traceable = 0;
        if (code_header.get(memory, layout.code.firsttraceable, &first_traceable, 4) &&
            offset < static_cast<int64_t>(first_traceable) * 2) {
          frame = next;
          continue;
        }
      }
      if (f.is_entry >= 0) {
        uint8_t entry = 0;
        header.get(memory, f.is_entry, &entry, 1);
        raw.is_entry = entry != 0;
      } else if (next != 0 && f.owner_shim >= 0) {
        uint8_t next_owner = 0;
        raw.is_entry = memory.read(next + static_cast<uint64_t>(f.owner), &next_owner, 1) == ReadStatus::Ok &&
                       next_owner >= f.owner_shim;
      } else {
        raw.is_entry = next == 0;
      }
    }
    ++visited;
    if (!visit(static_cast<const RawFrame&>(raw))) return WalkStop::Stopped;
    frame = next;
  }
  return WalkStop::End;
}

}  // namespace pyframes
