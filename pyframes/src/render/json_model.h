// The pieces of the --json document (a frame, a thread, a process, a failed target), shared by
// the per-process document and the merged view so both spell every field the same way.
#pragma once

#include "pyframes/json_writer.h"
#include "pyframes/model.h"
#include "pyframes/render.h"

namespace pyframes::render {

// A frame without its locals (the merged view writes those per rank).
void write_frame_fields(JsonWriter& json, const Frame& frame);
void write_frame(JsonWriter& json, const Frame& frame);
// thread_id, native_id, name, gil, state, truncated: a thread's fields without its frames.
void write_thread_fields(JsonWriter& json, const Thread& thread);
void write_thread(JsonWriter& json, const Thread& thread);
void write_process(JsonWriter& json, const Process& process);
void write_failure(JsonWriter& json, const FailedTarget& failure);
// The document's "errors" member, left out when there are none.
void write_failures(JsonWriter& json, const std::vector<FailedTarget>& failures);

}  // namespace pyframes::render
