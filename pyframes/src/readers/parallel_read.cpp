#include "pyframes/parallel_read.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <optional>
#include <system_error>
#include <thread>

namespace pyframes {

namespace {

Result<Process> read_one(size_t index, const IndexedReader& read) {
  try {
    return read(index);
  } catch (const std::exception& e) {
    return make_error(ErrorKind::Io, fmt::format("reading failed: {}", e.what()));
  } catch (...) {
    return make_error(ErrorKind::Io, "reading failed with an unknown exception");
  }
}

}  // namespace

size_t default_parallelism() {
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  return std::clamp<size_t>(cores * 4, 8, 32);
}

std::vector<Result<Process>> read_processes(const std::vector<int64_t>& pids, const ReadOptions& options,
                                            const ProcessReader& reader, size_t max_parallel) {
  return read_in_parallel(
      pids.size(), [&](size_t i) { return reader(pids[i], options); }, max_parallel);
}

std::vector<Result<Process>> read_in_parallel(size_t count, const IndexedReader& read, size_t max_parallel) {
  std::vector<std::optional<Result<Process>>> slots(count);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) {
      slots[i].emplace(read_one(i, read));
    }
  };
  const size_t workers = std::min(count, std::max<size_t>(1, max_parallel));
  std::vector<std::thread> threads;
  if (workers > 1) {
    threads.reserve(workers - 1);
    try {
      for (size_t i = 0; i + 1 < workers; ++i) threads.emplace_back(work);
    } catch (const std::system_error&) {
      // No more threads available: the ones started and this thread share the work.
    }
  }
  work();
  for (std::thread& thread : threads) thread.join();
  std::vector<Result<Process>> results;
  results.reserve(count);
  for (auto& slot : slots) results.push_back(std::move(*slot));
  return results;
}

}  // namespace pyframes
