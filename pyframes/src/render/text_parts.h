// Pieces of the text output shared by the per-process view and the merged view: colours, the
// "function (file:line)" of a frame, the source line under it, the words for a thread state.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "pyframes/model.h"
#include "pyframes/render.h"

namespace pyframes::render {

struct Palette {
  const char* header = "";
  const char* function = "";
  const char* location = "";
  const char* warning = "";
  const char* reset = "";
};

Palette palette_for(bool color);

// Target-controlled text made safe for one terminal line (printable_line).
std::string safe(std::string_view text);

// A process read live (its /proc entries describe it), as opposed to a core or a saved dump.
bool is_live(int64_t pid, const std::string& source);

// Where the source of a frame can be read from here: the target may run in another mount
// namespace or have started with a relative script path (live processes only).
std::optional<std::string> source_line(int64_t pid, bool live, const Frame& frame, SourceCache& sources);
// The carets under that source line marking the frame's column range (3.11+), when they say something.
std::optional<std::string> source_carets(int64_t pid, bool live, const Frame& frame, SourceCache& sources);

// "idle", "running", "waiting for the GIL", "holds the GIL", "idle, holds the GIL"; empty when
// nothing is known.
std::string thread_state_text(ThreadState state, bool gil);

// "function (file:line)" with colours (native frames: native_frame_text); no indent, no newline.
std::string frame_text(const Frame& frame, const Palette& colors);

// "[native] function (libc.so.6+0x1234)": the module's base name and the offset in its own
// numbering (what addr2line takes); "[native] libc.so.6+0x1234" when no symbol is known, the
// bare address when not even the module is.
std::string native_frame_text(const Frame& frame, const Palette& colors);

}  // namespace pyframes::render
