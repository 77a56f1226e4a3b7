// The watchdog: one thread per process, started with the recorder (at the first NCCL call).
// Every HANGSHIM_POLL_MS it writes the heartbeat, polls CUDA events of pending collectives,
// and looks at the oldest call not yet completed: pending longer than its limit, it marks the
// ledger stalled, writes this process's Python stacks next to the ledger and prints one line on
// stderr saying where to look and what to run. The limit is HANGSHIM_STALL_SECONDS when set,
// else learned from how long earlier calls from the same communicator and call-site stayed
// pending (stall_model.h): every completed call the watchdog passes is one sample.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>

#include "ledger/format.h"
#include "ledger/stall_model.h"

namespace hangshim::shim {

class Recorder;

class Watchdog {
 public:
  explicit Watchdog(Recorder& recorder);
  bool start() noexcept;  // false if the thread could not be created (recording goes on without)
  // Asks the thread to stop and waits up to `wait_ms` for it (at exit: it must not be inside
  // the CUDA driver while the driver is torn down). True once it has stopped.
  bool stop(uint32_t wait_ms) noexcept;

  // One round of work (the thread calls it; tests call it directly).
  void tick(uint64_t now) noexcept;
  // Completes records whose CUDA events have fired (a tick does it; so does the exit handler,
  // once the thread has stopped, so that a process that synchronized and exited between two
  // ticks does not leave its last collectives looking pending).
  void poll_completions(uint64_t now) noexcept;

 private:
  static void* main(void* self);
  void check_stall(uint64_t now) noexcept;
  void learn(const ledger::RingEntry& record) noexcept;
  // The limit for this record, and words saying where it came from (for the stall line).
  uint64_t limit_ns(const ledger::RingEntry& record) const noexcept;
  void report_stall(const ledger::RingEntry& record, uint64_t now, uint64_t limit) noexcept;

  Recorder& r_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> running_{false};
  uint64_t cursor_ = 1;    // records before it are known complete
  uint64_t reported_ = 0;  // the record reported as stalled, 0 when none
  ledger::StallModel model_;       // learned limits (unused with a fixed HANGSHIM_STALL_SECONDS)
};

}  // namespace hangshim::shim
