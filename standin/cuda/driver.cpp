#include "driver.h"

#include <thread>

namespace fakecuda {
namespace {

void run_worker(std::shared_ptr<StreamState> stream) {
  Driver& d = driver();
  std::unique_lock lock(d.mutex);
  for (;;) {
    d.changed.wait(lock, [&] { return !stream->queue.empty() || stream->destroyed; });
    if (stream->queue.empty()) return;  // destroyed and drained
    Item item = std::move(stream->queue.front());
    stream->queue.pop_front();
    if (item.wait_for) d.changed.wait(lock, [&] { return marks_done(*item.wait_for); });
    if (item.fn != nullptr) {
      lock.unlock();
      item.fn(item.data);  // may block forever: a hung collective, like a kernel that never ends
      lock.lock();
    }
    ++stream->completed;
    d.changed.notify_all();
  }
}

}  // namespace

Driver& driver() {
  static auto* d = new Driver;
  return *d;
}

Context*& current_context() {
  thread_local Context* current = nullptr;
  return current;
}

bool is_special_stream(CUstream stream) {
  return stream == nullptr || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD;
}

std::shared_ptr<StreamState> find_stream(CUstream stream) {
  const auto it = driver().streams.find(stream);
  return it == driver().streams.end() ? nullptr : it->second;
}

std::shared_ptr<EventState> find_event(CUevent event) {
  const auto it = driver().events.find(event);
  return it == driver().events.end() ? nullptr : it->second;
}

Marks marks_now(const std::shared_ptr<StreamState>& stream) {
  Marks marks;
  if (stream) {
    marks.emplace_back(stream, stream->enqueued);
    return marks;
  }
  for (const auto& [handle, s] : driver().streams) {
    if ((s->flags & CU_STREAM_NON_BLOCKING) == 0) marks.emplace_back(s, s->enqueued);
  }
  return marks;
}

bool marks_done(const Marks& marks) {
  for (const auto& [stream, count] : marks) {
    if (stream->completed < count) return false;
  }
  return true;
}

std::shared_ptr<StreamState> start_stream(Context* context, unsigned flags) {
  auto stream = std::make_shared<StreamState>();
  stream->context = context;
  stream->flags = flags;
  std::thread(run_worker, stream).detach();
  return stream;
}

void enqueue(StreamState& stream, Item item) {
  stream.queue.push_back(std::move(item));
  ++stream.enqueued;
  driver().changed.notify_all();
}

}  // namespace fakecuda
