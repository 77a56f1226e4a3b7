// Reading many inputs on every CPU the report may use, with the result the same as reading them
// one by one: a report over 131 072 ledgers spends most of its time copying and parsing them
// (docs/benchmarks.md), work that is independent from one ledger to the next, while what
// comes after (interning call-sites into shared pools, appending to the inputs) must happen in
// the inputs' order for the report to come out the same every time.
//
// So the items are prepared in batches of `batch` on all threads at once (items taken in turn
// from a shared counter) while the calling thread, before it joins in, finishes the batch before
// in order; at most two batches of prepared items are held at a time, which bounds the memory
// the threads add.
#pragma once

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace hangshim::report {

// How many threads read `count` inputs: the CPUs this process may run on (its affinity mask: a
// SLURM step or a cgroup may give it fewer than the machine has), at most 8 (past that the
// copies wait on memory, not on CPUs), and one per `per_thread` inputs at least (starting a
// thread costs about what reading a few dozen ledgers does); `requested` > 0 overrides it.
size_t reading_threads(size_t requested, size_t count, size_t per_thread);

// Calls prepare(worker, i) for every i in [0, count), worker in [0, threads) naming the thread
// (for its own reusable state), and finish(i) in order of i on the calling thread. Items that
// may be held prepared at once have different i % (2 * batch): a caller keeps that many slots.
// An exception from either stops the work and is thrown here once every thread has stopped.
template <typename Prepare, typename Finish>
void read_in_parallel(size_t count, size_t threads, size_t batch, Prepare&& prepare, Finish&& finish) {
  batch = std::max<size_t>(batch, 1);
  threads = std::max<size_t>(1, std::min(threads, count));
  if (threads == 1) {
    for (size_t i = 0; i < count; ++i) {
      prepare(size_t{0}, i);
      finish(i);
    }
    return;
  }
  std::atomic<size_t> next{0};
  size_t begin = 0;  // the batch being prepared: [begin, end)
  size_t end = std::min(count, batch);
  size_t done_begin = 0;  // the batch prepared before it, which the calling thread finishes
  size_t done_end = 0;
  std::exception_ptr failure;
  std::atomic<bool> failed{false};
  auto fail = [&](std::exception_ptr e) {
    if (!failed.exchange(true)) failure = e;
  };
  // Runs once every thread has arrived, before any goes on (so the barrier orders what it
  // writes before what they read): the batch just prepared is handed over, the next opened.
  auto next_batch = [&]() noexcept {
    done_begin = begin;
    done_end = end;
    begin = failed.load() ? count : end;
    end = std::min(count, begin + batch);
    next.store(begin, std::memory_order_relaxed);
  };
  std::barrier sync(static_cast<std::ptrdiff_t>(threads), next_batch);
  auto work = [&](size_t worker) {
    while (true) {
      if (worker == 0) {
        try {
          for (size_t i = done_begin; i < done_end && !failed.load(); ++i) finish(i);
        } catch (...) {
          fail(std::current_exception());
        }
        done_begin = done_end;
      }
      if (begin >= count) return;
      for (size_t i = next.fetch_add(1, std::memory_order_relaxed); i < end; i = next.fetch_add(1, std::memory_order_relaxed)) {
        if (failed.load(std::memory_order_relaxed)) break;
        try {
          prepare(worker, i);
        } catch (...) {
          fail(std::current_exception());
        }
      }
      sync.arrive_and_wait();
    }
  };
  std::vector<std::thread> helpers;
  helpers.reserve(threads - 1);
  for (size_t w = 1; w < threads; ++w) {
    try {
      helpers.emplace_back(work, w);
    } catch (...) {
      // No thread to be had (a process or memory limit: std::system_error, std::bad_alloc):
      // the threads started do the share of those that could not be.
      for (size_t left = w; left < threads; ++left) sync.arrive_and_drop();
      break;
    }
  }
  work(0);
  for (auto& t : helpers) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace hangshim::report
