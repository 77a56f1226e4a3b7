// A thread's native stack as the unwinder leaves it (addresses) and as the model shows it
// (symbolized frames), before it is merged with the thread's Python frames.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pyframes/model.h"

namespace pyframes::native {

struct RawFrame {
  uint64_t pc = 0;
  // A caller's pc is the return address, one past its call: names are looked up at pc - 1
  // (the call may be a function's last instruction). False for the innermost frame, signal
  // trampolines and frames interrupted by a signal.
  bool return_address = false;
};

struct RawStack {
  int64_t tid = 0;
  std::vector<RawFrame> frames;  // innermost first
  // Why the stack may be incomplete ("unwinding stopped at 0x...: ...", "no unwind information
  // for ..."); empty when the unwind reached the outermost frame on unwind information alone.
  std::string problem;
};

struct NativeStack {
  int64_t tid = 0;
  std::vector<Frame> frames;  // Frame::Kind::Native, innermost first
  std::string problem;
};

}  // namespace pyframes::native
