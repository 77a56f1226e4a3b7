// The shim's state for one process: the ledger writer, the communicator table, call-site
// capture, completion tracking and the watchdog. Created at the first NCCL call (never at
// load time: most processes that inherit LD_PRELOAD never call NCCL and get no ledger), thrown
// away in a fork child (which starts over with its own ledger on its first call).
//
// The NCCL entry points (preload/shim/wrappers_*.cpp) call begin/end around the real call;
// everything here is noexcept and never changes what NCCL returns.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>

#include "ledger/writer.h"
#include "shim/core/clock.h"
#include "shim/core/comm_table.h"
#include "shim/core/completion.h"
#include "shim/core/config.h"

namespace hangshim::shim {

class CallsiteCapture;
class Watchdog;

// The real NCCL's queries, handed over by the entry points once resolved (ncclResult_t is an
// int-sized enum; ncclComm_t a pointer).
struct NcclQueries {
  int (*comm_user_rank)(void* comm, int* rank) = nullptr;
  int (*comm_count)(void* comm, int* count) = nullptr;
  int (*comm_cu_device)(void* comm, int* device) = nullptr;
  int (*get_version)(int* version) = nullptr;
};

struct CallInfo {
  ledger::Op op = ledger::Op::None;
  void* comm = nullptr;
  void* stream = nullptr;
  uint64_t count = 0;
  int32_t dtype = -1;
  int32_t red_op = -1;
  int32_t peer = -1;
  uint16_t flags = 0;  // RecordFlag bits the entry point knows (kRecordBcastForm)
};

// What end() needs to finish a record; plain data, lives on the wrapper's stack.
struct CallToken {
  uint64_t index = 0;  // 0: nothing recorded
  uint64_t seq = 0;
  uint64_t issued_ns = 0;
  void* stream = nullptr;
  uint32_t comm = 0;
  ledger::Op op = ledger::Op::None;
  bool in_group = false;
  bool registered = false;  // begin_init made a new communicator entry (t.comm)
};

class Recorder {
 public:
  // The process's recorder, created on first use; nullptr when recording is off
  // (HANGSHIM_DISABLE=1, or the ledger could not be created: warned once).
  static Recorder* instance() noexcept;
  // The recorder if it has been created, else nullptr (never creates one).
  static Recorder* existing() noexcept;
  // Registered by the entry points; used to learn rank/size/device of communicators.
  static void set_queries(const NcclQueries& queries) noexcept;

  // --- collectives and point-to-point (hot path) ---------------------------------------
  CallToken begin(const CallInfo& call) noexcept;
  void end(const CallToken& token, int result) noexcept;

  // --- groups ----------------------------------------------------------------------------
  void group_start() noexcept;
  void group_end(int result) noexcept;
  // ncclGroupSimulateEnd: the group ends without running (NCCL only estimates its time, a
  // purely local call that other ranks need not make). Its calls are closed as simulated and
  // give back their sequence numbers, op counts and call-site hits, so the next real call
  // numbers as on the ranks that did not simulate.
  void group_simulate_end(int result) noexcept;

  // --- communicator life cycle -----------------------------------------------------------
  // Before an init/split/shrink call: registers the new communicator as Initializing (so a
  // rank stuck in init is visible) and records the call. `parent` for splits and shrinks.
  // `init` is null for a split with NCCL_SPLIT_NOCOLOR (no new communicator); the record then
  // names the parent.
  CallToken begin_init(ledger::Op op, const ledger::CommInit* init, void* parent) noexcept;
  // After it: the handle NCCL gave (null on failure or NCCL_SPLIT_NOCOLOR).
  void end_init(const CallToken& token, int result, void* new_comm) noexcept;
  // ncclCommInitAll: one call, several communicators (handles known only afterwards).
  CallToken begin_init_all(int ndev) noexcept;
  void end_init_all(const CallToken& token, int result, std::span<void* const> comms, const int* devices) noexcept;
  // For ncclCommSplit/Shrink: the parent's key and its split count (then incremented).
  uint64_t take_split_index(void* parent, uint32_t* split_index) noexcept;
  // Finalize / destroy / abort / revoke.
  CallToken begin_end_of_comm(ledger::Op op, void* comm) noexcept;
  void end_end_of_comm(const CallToken& token, int result, void* comm) noexcept;
  // ncclCommGetAsyncError's answer, to a poll that began at `asked_ns`: nonblocking
  // communicators become active (or failed), errors are kept, calls in progress are settled
  // (record_in_progress.cpp). `error_text`: ncclGetLastError's words for an error, or null.
  void async_status(void* comm, int async_error, uint64_t asked_ns, const char* error_text) noexcept;
  void nccl_version(int version) noexcept;
  // A call returned an error (the failure path only): whether the ledger still wants the text
  // (only the process's first failure is kept, so later ones skip asking NCCL), and keeping it.
  bool wants_error_text() const noexcept;
  void note_failure(const CallToken& token, int result, const char* text) noexcept;

  // --- watchdog and process life ---------------------------------------------------------
  ledger::Writer& writer() noexcept { return *writer_; }
  const Config& config() const noexcept { return config_; }
  CudaCompletion* completion() noexcept { return cuda_enabled_ ? &completion_ : nullptr; }
  void complete(uint64_t index, uint32_t comm, uint64_t seq, bool p2p, uint64_t now_ns, uint16_t flags) noexcept;
  const std::string& ledger_dir() const noexcept { return dir_; }
  const std::string& stacks_path() const noexcept { return stacks_path_; }
  CallsiteCapture* callsites() noexcept { return callsites_.get(); }
  void on_exit() noexcept;

  ~Recorder();

 private:
  Recorder() = default;
  static Recorder* create() noexcept;
  uint32_t comm_id(void* comm) noexcept;           // finds, or registers an unknown communicator
  void learn_comm_details(uint32_t id, void* comm) noexcept;  // rank/size/device via queries
  ledger::RecordStart start_record(ledger::Op op, uint32_t comm, uint64_t now_ns) noexcept;
  // A call on `comm` returned ncclInProgress; and settling such calls (record_in_progress.cpp).
  void note_in_progress(uint32_t comm) noexcept;
  void settle_in_progress(uint32_t comm, int async_error, uint64_t asked_ns, const char* error_text) noexcept;

  Config config_;
  std::string dir_;
  std::string host_;
  std::string stacks_path_;
  int64_t pid_ = 0;
  std::unique_ptr<ledger::Writer> writer_;
  CommTable comms_;
  std::mutex registry_mutex_;  // communicator registration (rare)
  std::atomic<uint32_t> init_all_calls_{0};
  std::unique_ptr<std::atomic<uint8_t>[]> detail_attempts_;  // per comm id: queries tried
  std::atomic<uint64_t> groups_{0};
  bool cuda_enabled_ = false;
  CudaCompletion completion_;
  std::unique_ptr<CallsiteCapture> callsites_;
  std::unique_ptr<Watchdog> watchdog_;

  friend class RecorderAccess;
};

// The queries registered with set_queries, or nullptr.
const NcclQueries* current_queries() noexcept;
// Fork child: the forking thread's group state (ncclGroupStart depth, members) starts over.
void reset_thread_group_state() noexcept;

// The calling thread's Linux thread id, cached per thread.
uint32_t current_tid() noexcept;

}  // namespace hangshim::shim
