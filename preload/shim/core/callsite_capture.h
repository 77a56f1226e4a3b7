// Python call-site capture at each NCCL call, through pyframes reading this very process.
//
// Hot path: PyGILState_GetThisThreadState() (works without the GIL) -> the thread's innermost
// frames as (code object, instruction offset) pairs -> a fixed-size open-addressing cache keyed
// by that chain -> the call-site id, and its hit count (the loop-iteration hint: counted per
// chain of the job's own frames, so chains that differ only in library frames, an engine taking
// another internal path from one step on, share one count). No
// allocation, no lock, no syscall after a call-site's first sighting. A miss resolves names
// and lines once (allocating) and interns them into the ledger.
//
// A thread without Python frames (DDP's reducer, autograd, a C++ thread) borrows the main
// thread's call-site. The main thread keeps running meanwhile, so its frames are read through
// the kernel (SelfMemory syscall mode), which fails cleanly on memory freed under our feet.
#pragma once

#include <atomic>
#include <map>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ledger/writer.h"
#include "pyframes/self_memory.h"
#include "pyframes/callsite.h"
#include "pyframes/layout.h"
#include "pyframes/target.h"
#include "shim/core/config.h"

namespace hangshim::shim {

struct CallsiteHit {
  uint32_t id = 0;    // 0: no call-site (no Python, capture failed, table full)
  uint64_t hit = 0;   // the nth sighting of this call-site's own frames (library frames aside)
  uint32_t flags = 0; // ledger::CallsiteFlag
};

class CallsiteCapture {
 public:
  static constexpr size_t kMaxDepth = ledger::kMaxCallsiteDepth;

  CallsiteCapture(ledger::Writer& writer, const Config& config);
  ~CallsiteCapture();

  CallsiteHit capture() noexcept;

  // Takes back the sighting of call-site `id` (a call that never ran: its group ended simulated).
  void give_back(uint32_t id) noexcept;

  // "train.py:88 in train_step" for a call-site id (the stall message); empty if unknown.
  std::string describe(uint32_t id) const;
  // The Python runtime found in this process, for the stall stack dump; false if none.
  bool python(pyframes::PythonTarget* target, pyframes::Layout* layout) const;

  // pthread_self() of the thread that loaded the shim (the process's main thread).
  static void set_main_thread(uint64_t pthread_id) noexcept;

 private:
  struct Slot {
    std::atomic<uint32_t> state{0};  // 0 empty, 1 published
    uint32_t id = 0;
    uint32_t flags = 0;
    uint32_t depth = 0;
    uint64_t hash = 0;
    uint32_t chain = 0;  // offset into chains_
    uint32_t counter = 0;  // index into counters_: its count of sightings of the job's frames
  };

  bool setup() noexcept;
  bool setup_locked();
  uint64_t main_thread_state() noexcept;
  size_t collect(uint64_t tstate, const pyframes::SelfMemory& memory, pyframes::CodeLocation* out,
                 size_t capacity) const noexcept;
  // Counts one sighting of call-site `id` (none for id 0) and returns the hit.
  CallsiteHit sighting(uint32_t id, uint32_t flags, uint32_t counter) noexcept;
  const Slot* find(uint64_t hash, const pyframes::CodeLocation* chain, size_t depth) const noexcept;
  uint32_t intern(uint64_t hash, const pyframes::CodeLocation* chain, size_t depth, bool truncated, bool borrowed,
                  uint32_t* flags, uint32_t* counter);

  ledger::Writer& writer_;
  const Config config_;
  size_t depth_;
  uint64_t serial_;  // this capture among the process's (a thread's memo names the one it is for)

  // Set once by setup(); read without locks afterwards (published by ready_).
  std::atomic<int> ready_{0};  // 0 not tried, 1 ready, 2 unavailable (no Python)
  using GetThisThreadState = void* (*)();
  GetThisThreadState get_this_thread_state_ = nullptr;
  using IsInitialized = int (*)();
  IsInitialized is_initialized_ = nullptr;  // Py_IsInitialized: no borrowing once Python is finalized
  pyframes::PythonTarget target_;
  pyframes::Layout layout_;
  std::unique_ptr<pyframes::SelfMemory> own_memory_;      // table mode: the caller's own frames
  std::unique_ptr<pyframes::SelfMemory> foreign_memory_;  // syscall mode: another thread's frames
  std::atomic<uint64_t> main_tstate_{0};

  std::unique_ptr<Slot[]> slots_;
  uint32_t slot_mask_ = 0;
  std::unique_ptr<pyframes::CodeLocation[]> chains_;  // depth_ locations per interned call-site
  uint32_t chains_used_ = 0;                          // in call-sites
  uint32_t chains_capacity_ = 0;
  std::atomic<bool> full_{false};  // nothing more can be remembered: new chains skip the slow path
  // One sighting count per chain of the job's own frames (file, function, line of each frame
  // outside the libraries, and whether the stack was borrowed), shared by the call-sites that
  // have them; `counter_of_` maps a call-site id to its count (set before the slot is published).
  std::unique_ptr<std::atomic<uint64_t>[]> counters_;
  std::unique_ptr<uint32_t[]> counter_of_;  // by id - 1
  uint32_t counters_used_ = 0;
  std::map<std::string, uint32_t> user_keys_;  // under miss_mutex_

  mutable std::mutex miss_mutex_;  // the slow path: setup, describing and interning
  std::vector<std::string> descriptions_;  // by id - 1
};

}  // namespace hangshim::shim
