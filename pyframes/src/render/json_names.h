// The words the --json document uses for enums (thread states, frame kinds, error kinds), in one
// place for the writer and the reader of saved documents, so the two can never disagree.
#pragma once

#include <optional>
#include <string_view>

#include "pyframes/model.h"
#include "pyframes/result.h"

namespace pyframes::render {

const char* frame_kind_name(Frame::Kind kind);            // "python", "native"
const char* thread_state_name(ThreadState state);         // "idle", "holds_gil", ...
const char* error_kind_name(ErrorKind kind);              // "not_found", ...

std::optional<Frame::Kind> frame_kind_from_name(std::string_view name);
std::optional<ThreadState> thread_state_from_name(std::string_view name);
std::optional<ErrorKind> error_kind_from_name(std::string_view name);

}  // namespace pyframes::render
