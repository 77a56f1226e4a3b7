// Merging native stacks into Python threads. Each call of the interpreter's evaluation loop
// (_PyEval_EvalFrameDefault) on the native stack is replaced by the Python frames it was
// running: one frame per call up to 3.10, a run of frames ending at an entry frame from 3.11
// (Frame::is_entry). Other native frames stay, in order. When the number of evaluation-loop
// calls and the number of Python runs differ, nothing is guessed: the thread keeps its Python
// frames and carries the native stack unmerged, with a note saying why.
#pragma once

#include <string_view>
#include <vector>

#include "native/native_stack.h"
#include "pyframes/model.h"

namespace pyframes::native {

// The evaluation loop's symbol.
inline constexpr std::string_view kEvalLoopFunction = "_PyEval_EvalFrameDefault";

// True for a frame of the evaluation loop, including compiler-split parts of it
// ("_PyEval_EvalFrameDefault.cold").
bool is_eval_loop_frame(const Frame& frame);

// How many evaluation-loop calls ran these Python frames (innermost first): one per entry frame,
// plus one for trailing frames of a chain whose outermost frame is not marked as an entry.
size_t python_runs(const std::vector<Frame>& python_frames);

// Merges one thread's native stack (unwound elsewhere, e.g. by a debugger) into it.
void merge_native_stack(Thread& thread, NativeStack stack);

// Merges `stacks` (matched to threads by native id) into `process`. Stacks of threads with no
// Python state are added as threads of their own when `all_threads`, else dropped.
void merge_native_stacks(Process& process, std::vector<NativeStack> stacks, bool all_threads);

}  // namespace pyframes::native
