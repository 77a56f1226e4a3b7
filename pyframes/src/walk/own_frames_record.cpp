// What a walk of the caller's own frames read from the frames themselves (own_frames_record in
// pyframes/callsite.h): recorded once after a full walk, compared at the next call instead of
// walking again. Only frame-side fields: the answer of a walk is a function of these and of
// the code objects they point to, whose fields the walk reads (type, size, first traceable
// instruction) never change while the frame holds them.
#include "pyframes/callsite.h"
#include "pyframes/self_memory.h"
#include "walk/frame_chain.h"
#include "walk/own_frames_memory.h"

namespace pyframes {

namespace {

// Visits the frame-side fields of each frame from the innermost through `last` (0: through
// the outermost), at most OwnFramesRecord::kMaxSteps frames: visit(index, frame, seen) -> bool.
// False if the chain could not be followed that far.
template <class Visit>
bool follow(const OwnFramesMemory& memory, const Layout& layout, uint64_t tstate, uint64_t last, Visit&& visit) noexcept {
  uint64_t frame = 0;
  if (first_frame(memory, layout, tstate, &frame) != ReadStatus::Ok) return false;
  const auto& fl = layout.interpreter_frame;
  const auto& fo = layout.frame_object;
  bool objects = layout.frame_model == FrameModel::FrameObject;
  FieldBlock header(objects ? std::initializer_list<std::pair<int64_t, int>>{{fo.code, 8}, {fo.lasti, 4}, {fo.back, 8}}
                            : std::initializer_list<std::pair<int64_t, int>>{
                                  {fl.owner, 1}, {fl.previous, 8}, {fl.executable, 8}, {fl.instr_ptr, 8}});
  for (size_t i = 0; i < OwnFramesRecord::kMaxSteps; ++i) {
    if (frame == 0 || (frame & 7) != 0 || !header.load(memory, frame)) return false;
    OwnFramesRecord::Seen seen{};
    bool ok = objects ? header.get(memory, fo.code, &seen.code, 8) && header.get(memory, fo.lasti, &seen.position, 4) &&
                            header.get(memory, fo.back, &seen.next, 8)
                      : header.get(memory, fl.owner, &seen.owner, 1) && header.get(memory, fl.previous, &seen.next, 8) &&
                            header.get(memory, fl.executable, &seen.code, 8) &&
                            header.get(memory, fl.instr_ptr, &seen.position, 8);
    if (!ok || !visit(i, frame, seen)) return false;
    if (frame == last || (last == 0 && seen.next == 0)) return true;
    frame = seen.next;
  }
  return false;
}

}  // namespace

bool record_own_frames(const SelfMemory& memory, const Layout& layout, uint64_t tstate, uint64_t last_frame,
                       OwnFramesRecord* out) noexcept {
  out->steps = 0;
  // Free-threaded builds: a frame's bytecode copy (tlbc) lives in a per-code array that
  // changes; not recorded, walked every time.
  if (memory.mode() != SelfMemory::Mode::Table || tstate == 0 ||
      (layout.interpreter_frame.tlbc_index >= 0 && layout.code.tlbc >= 0)) {
    return false;
  }
  OwnFramesMemory own(memory);
  uint32_t steps = 0;
  bool whole = follow(own, layout, tstate, last_frame, [&](size_t i, uint64_t frame, const OwnFramesRecord::Seen& seen) {
    if (i == 0) out->first = frame;
    out->seen[i] = seen;
    steps = static_cast<uint32_t>(i + 1);
    return true;
  });
  if (!whole) return false;
  out->last = last_frame;
  out->steps = steps;
  return true;
}

bool same_own_frames(const SelfMemory& memory, const Layout& layout, uint64_t tstate,
                     const OwnFramesRecord& record) noexcept {
  if (record.steps == 0 || memory.mode() != SelfMemory::Mode::Table) return false;
  OwnFramesMemory own(memory);
  size_t visited = 0;
  bool whole = follow(own, layout, tstate, record.last, [&](size_t i, uint64_t frame, const OwnFramesRecord::Seen& seen) {
    const OwnFramesRecord::Seen& then = record.seen[i];
    if (i >= record.steps || (i == 0 && frame != record.first) || seen.next != then.next || seen.code != then.code ||
        seen.position != then.position || seen.owner != then.owner) {
      return false;
    }
    visited = i + 1;
    return true;
  });
  return whole && visited == record.steps;
}

}  // namespace pyframes
