// Splitting one pass of the analysis over the CPUs: with 131 072 ranks, placing each rank and
// lining up every member's arrivals (stragglers.cpp) are a few tenths of a second each, after
// the reading, on one thread, while the other CPUs wait.
//
// The work is cut into contiguous parts, one per thread; each part writes only its own slots of
// what the caller prepared (or its own scratch, merged afterwards in part order), so the result
// is the same for any number of parts.
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace hangshim::report {

// How many parts split_in_parallel makes of `count` items when asked for `parts`: at least one,
// at most one an item. State kept per part is sized by it.
inline size_t split_parts(size_t count, size_t parts) {
  return std::clamp<size_t>(parts, 1, std::max<size_t>(count, 1));
}

// Calls body(part, begin, end) for split_parts(count, parts) contiguous parts of [0, count) at
// once, part 0 on the calling thread, and returns when all have returned. A part whose thread
// cannot be started (a process or memory limit) runs on the calling thread after its own. The
// first exception a part throws is thrown here once every part has stopped.
template <typename Body>
void split_in_parallel(size_t count, size_t parts, Body&& body) {
  parts = split_parts(count, parts);
  if (parts == 1) {
    body(size_t{0}, size_t{0}, count);
    return;
  }
  std::mutex failure_lock;
  std::exception_ptr failure;
  auto run = [&](size_t part) {
    try {
      body(part, count * part / parts, count * (part + 1) / parts);
    } catch (...) {
      std::lock_guard<std::mutex> hold(failure_lock);
      if (!failure) failure = std::current_exception();
    }
  };
  std::vector<std::thread> helpers;
  helpers.reserve(parts - 1);
  size_t started = 1;
  for (; started < parts; ++started) {
    try {
      helpers.emplace_back(run, started);
    } catch (...) {
      break;
    }
  }
  run(0);
  for (size_t part = started; part < parts; ++part) run(part);
  for (auto& t : helpers) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace hangshim::report
