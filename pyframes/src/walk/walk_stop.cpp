#include "walk/frame_chain.h"

namespace pyframes {

const char* to_string(WalkStop stop) {
  switch (stop) {
    case WalkStop::End: return "end of stack";
    case WalkStop::Limit: return "frame limit reached";
    case WalkStop::Cycle: return "the frame chain loops";
    case WalkStop::Unreadable: return "a frame could not be read";
    case WalkStop::NotCode: return "a frame's code object is not a code object";
    case WalkStop::Zeroed: return "a frame's memory is all zeros";
    case WalkStop::Stopped: return "stopped";
  }
  return "unknown";
}

}  // namespace pyframes
