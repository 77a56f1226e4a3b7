// Blocking calls of the standard library, recognised by the innermost Python frame: where a
// thread that waits for something (a lock, a condition, a queue, a child, a socket) sits when
// the wait itself is C code that has no frame. time.sleep() and a bare lock.acquire() leave no
// trace in the frames; for live processes the kernel tells those apart.
#include <array>
#include <string_view>

#include "pyframes/thread_activity.h"

namespace pyframes {

namespace {

struct KnownWait {
  std::string_view file_suffix;  // "/threading.py" matches any installation
  std::string_view function;
};

constexpr std::array<KnownWait, 36> kKnownWaits{{
    {"/threading.py", "wait"},            // Condition.wait, Event.wait
    {"/threading.py", "wait_for"},
    {"/threading.py", "_wait_for_tstate_lock"},  // Thread.join
    {"/threading.py", "join"},
    {"/threading.py", "acquire"},         // Semaphore.acquire
    {"/threading.py", "_wait"},           // Barrier.wait
    {"/queue.py", "get"},
    {"/queue.py", "put"},
    {"/queue.py", "join"},
    {"/selectors.py", "select"},
    {"/socket.py", "accept"},
    {"/socket.py", "readinto"},
    {"/socket.py", "create_connection"},
    {"/ssl.py", "read"},
    {"/ssl.py", "recv"},
    {"/ssl.py", "recv_into"},
    {"/ssl.py", "accept"},
    {"/subprocess.py", "wait"},
    {"/subprocess.py", "_wait"},
    {"/subprocess.py", "_try_wait"},
    {"/subprocess.py", "communicate"},
    {"/subprocess.py", "_communicate"},
    {"/multiprocessing/connection.py", "_recv"},
    {"/multiprocessing/connection.py", "_recv_bytes"},
    {"/multiprocessing/connection.py", "recv"},
    {"/multiprocessing/connection.py", "recv_bytes"},
    {"/multiprocessing/connection.py", "_poll"},
    {"/multiprocessing/connection.py", "poll"},
    {"/multiprocessing/connection.py", "wait"},
    {"/multiprocessing/connection.py", "accept"},
    {"/multiprocessing/synchronize.py", "__enter__"},
    {"/multiprocessing/synchronize.py", "acquire"},
    {"/multiprocessing/synchronize.py", "wait"},
    {"/multiprocessing/queues.py", "get"},
    {"/concurrent/futures/_base.py", "result"},
    {"/concurrent/futures/thread.py", "_worker"},
}};

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_known_wait(const Frame& frame) {
  for (const KnownWait& wait : kKnownWaits) {
    if (frame.function == wait.function && ends_with(frame.file, wait.file_suffix)) return true;
  }
  return false;
}

}  // namespace

bool in_known_wait(const std::vector<Frame>& frames) {
  for (const Frame& frame : frames) {
    if (frame.kind != Frame::Kind::Python) continue;  // native frames (--native) sit below
    return is_known_wait(frame);                      // only the innermost Python frame counts
  }
  return false;
}

}  // namespace pyframes
