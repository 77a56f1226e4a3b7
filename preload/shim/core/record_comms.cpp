// Communicator life cycle: init (by unique id, ids, split, shrink, init-all), finalize,
// destroy, abort, asynchronous status. Rare calls: a mutex serializes registration.
#include "shim/core/callsite_capture.h"
#include "shim/core/comm_key.h"
#include "shim/core/recorder.h"

namespace hangshim::shim {

using namespace hangshim::ledger;

namespace {
constexpr uint8_t kMaxDetailAttempts = 8;
// ncclInProgress (nonblocking) is not a failure: the ledger's rule (format.h).
bool failed(int result) { return is_failure(result); }
}  // namespace

uint32_t Recorder::comm_id(void* comm) noexcept {
  uint64_t handle = reinterpret_cast<uint64_t>(comm);
  if (handle == 0) return 0;
  uint32_t id = comms_.find(handle);
  if (id != 0) return id == CommTable::kNotRecorded ? 0 : id;
  // First sight of a communicator created where we could not see it: record it under a key
  // only this rank knows (it still shows this rank's counters and calls).
  std::lock_guard<std::mutex> lock(registry_mutex_);
  id = comms_.find(handle);
  if (id == 0) {
    CommInit init;
    init.key_kind = KeyKind::Unknown;
    init.state = CommState::Active;
    init.key = key_from_unknown(host_, pid_, handle);
    init.handle = handle;
    init.created_ns = now_ns();
    id = writer_->add_comm(init);
    comms_.insert(handle, id != 0 ? id : CommTable::kNotRecorded);
    if (id != 0) learn_comm_details(id, comm);
  }
  return id == CommTable::kNotRecorded ? 0 : id;
}

void Recorder::learn_comm_details(uint32_t id, void* comm) noexcept {
  CommEntry* c = writer_->comm(id);
  const NcclQueries* q = current_queries();
  if (c == nullptr || q == nullptr || comm == nullptr) return;
  if (!detail_attempts_) return;
  // A communicator that cannot answer (still initializing) is asked again on later calls, a
  // few times, not forever.
  std::atomic<uint8_t>& attempts = detail_attempts_[id - 1];
  if (attempts.load(std::memory_order_relaxed) >= kMaxDetailAttempts) return;
  attempts.fetch_add(1, std::memory_order_relaxed);
  int value = 0;
  if (load_relaxed(c->rank) < 0 && q->comm_user_rank != nullptr && q->comm_user_rank(comm, &value) == 0) {
    store_relaxed(c->rank, value);
  }
  if (load_relaxed(c->nranks) <= 0 && q->comm_count != nullptr && q->comm_count(comm, &value) == 0) {
    store_relaxed(c->nranks, value);
  }
  if (load_relaxed(c->device) < 0 && q->comm_cu_device != nullptr && q->comm_cu_device(comm, &value) == 0) {
    store_relaxed(c->device, value);
  }
}

uint64_t Recorder::take_split_index(void* parent, uint32_t* split_index) noexcept {
  *split_index = 0;
  CommEntry* c = writer_->comm(comm_id(parent));
  if (c == nullptr) return 0;
  *split_index = fetch_add_relaxed(c->splits, uint32_t{1});
  return load_relaxed(c->key);
}

CallToken Recorder::begin_init(Op op, const CommInit* init, void* parent) noexcept {
  CallToken t;
  uint64_t now = now_ns();
  t.op = op;
  t.issued_ns = now;
  if (init != nullptr) {
    std::lock_guard<std::mutex> lock(registry_mutex_);
    CommInit registered = *init;
    registered.state = CommState::Initializing;
    registered.created_ns = now;
    t.comm = writer_->add_comm(registered);
    t.registered = true;
  } else {
    t.comm = comm_id(parent);
  }
  RecordStart s = start_record(op, t.comm, now);
  if (init != nullptr) {
    s.peer = init->rank;      // for init records: this rank and the communicator's size
    s.count = static_cast<uint64_t>(init->nranks > 0 ? init->nranks : 0);
  }
  if (callsites_) {
    CallsiteHit hit = callsites_->capture();
    s.callsite = hit.id;
    s.callsite_hit = hit.hit;
  }
  t.index = writer_->begin_record(s);
  return t;
}

void Recorder::end_init(const CallToken& t, int result, void* new_comm) noexcept {
  uint64_t now = now_ns();
  bool in_progress = result == kInProgressResult && t.registered && new_comm != nullptr;
  if (t.index != 0) {
    // A nonblocking init in progress is settled by ncclCommGetAsyncError, as collectives are
    // (record_in_progress.cpp): done, or failed with NCCL's asynchronous error.
    writer_->record_returned(t.index, now, result, in_progress ? kRecordInProgress : 0, in_progress ? 0 : now);
    if (in_progress) note_in_progress(t.comm);
  }
  if (!t.registered) return;  // NCCL_SPLIT_NOCOLOR: no child; the record named the parent
  CommEntry* c = writer_->comm(t.comm);
  if (c == nullptr) return;
  if (failed(result) || new_comm == nullptr) {
    store_relaxed(c->ended_ns, now);
    store_release(c->state, static_cast<uint32_t>(CommState::Failed));
    return;
  }
  uint64_t handle = reinterpret_cast<uint64_t>(new_comm);
  {
    std::lock_guard<std::mutex> lock(registry_mutex_);
    store_relaxed(c->handle, handle);
    comms_.insert(handle, t.comm);
  }
  // ncclInProgress: a nonblocking communicator, active once ncclCommGetAsyncError says so.
  if (result == 0) {
    store_release(c->state, static_cast<uint32_t>(CommState::Active));
    learn_comm_details(t.comm, new_comm);
  }
}

CallToken Recorder::begin_init_all(int ndev) noexcept {
  CallToken t;
  uint64_t now = now_ns();
  t.op = Op::CommInitAll;
  t.issued_ns = now;
  RecordStart s = start_record(Op::CommInitAll, 0, now);
  s.count = static_cast<uint64_t>(ndev > 0 ? ndev : 0);
  t.index = writer_->begin_record(s);
  return t;
}

void Recorder::end_init_all(const CallToken& t, int result, std::span<void* const> comms, const int* devices) noexcept {
  uint64_t now = now_ns();
  if (t.index != 0) writer_->record_returned(t.index, now, result, 0, now);
  if (failed(result)) return;
  uint32_t call = init_all_calls_.fetch_add(1, std::memory_order_relaxed);
  uint64_t key = key_from_init_all(host_, pid_, call);
  std::lock_guard<std::mutex> lock(registry_mutex_);
  for (size_t i = 0; i < comms.size(); ++i) {
    if (comms[i] == nullptr) continue;
    CommInit init;
    init.key_kind = KeyKind::InitAll;
    init.state = CommState::Active;
    init.key = key;
    init.handle = reinterpret_cast<uint64_t>(comms[i]);
    init.rank = static_cast<int32_t>(i);
    init.nranks = static_cast<int32_t>(comms.size());
    init.device = devices != nullptr ? devices[i] : static_cast<int32_t>(i);
    init.created_ns = now;
    uint32_t id = writer_->add_comm(init);
    comms_.insert(init.handle, id != 0 ? id : CommTable::kNotRecorded);
  }
}

CallToken Recorder::begin_end_of_comm(Op op, void* comm) noexcept {
  CallToken t;
  uint64_t now = now_ns();
  t.op = op;
  t.issued_ns = now;
  t.comm = comm_id(comm);
  t.index = writer_->begin_record(start_record(op, t.comm, now));
  return t;
}

void Recorder::end_end_of_comm(const CallToken& t, int result, void* comm) noexcept {
  uint64_t now = now_ns();
  if (t.index != 0) writer_->record_returned(t.index, now, result, 0, now);
  if (failed(result)) return;
  if (t.op == Op::CommRevoke) {
    // NCCL cancels what was in flight and keeps the communicator (to destroy or shrink it):
    // the calls issued before now were cancelled, not stuck.
    if (CommEntry* c = writer_->comm(t.comm)) store_release(c->revoked_ns, now);
    return;
  }
  if (CommEntry* c = writer_->comm(t.comm)) {
    CommState state = t.op == Op::CommFinalize ? CommState::Finalized
                      : t.op == Op::CommAbort  ? CommState::Aborted
                                               : CommState::Destroyed;
    store_relaxed(c->ended_ns, now);
    store_release(c->state, static_cast<uint32_t>(state));
  }
  if (t.op != Op::CommFinalize) {
    // NCCL frees the communicator: its address may be handed out again.
    std::lock_guard<std::mutex> lock(registry_mutex_);
    comms_.erase(reinterpret_cast<uint64_t>(comm));
  }
}

void Recorder::async_status(void* comm, int async_error, uint64_t asked_ns, const char* error_text) noexcept {
  uint32_t id = comms_.find(reinterpret_cast<uint64_t>(comm));
  CommEntry* c = id == CommTable::kNotRecorded ? nullptr : writer_->comm(id);
  if (c == nullptr) return;
  if (async_error == kInProgressResult) return;  // still in progress: nothing changed
  bool initializing = load_acquire(c->state) == static_cast<uint32_t>(CommState::Initializing);
  if (async_error == 0) {
    if (initializing) {
      store_release(c->state, static_cast<uint32_t>(CommState::Active));
      learn_comm_details(id, comm);
    }
  } else {
    store_relaxed(c->async_error, static_cast<int32_t>(async_error));
    if (initializing) {  // a nonblocking init that failed in the background
      store_relaxed(c->ended_ns, now_ns());
      store_release(c->state, static_cast<uint32_t>(CommState::Failed));
    }
  }
  settle_in_progress(id, async_error, asked_ns, error_text);
}

bool Recorder::wants_error_text() const noexcept {
  return load_acquire(writer_->header().error_state) == static_cast<uint32_t>(ErrorState::None);
}

void Recorder::note_failure(const CallToken& t, int result, const char* text) noexcept {
  // The failure path only: the record's flags say which function it was (ncclBcast).
  RingEntry e;
  uint32_t flags = t.index != 0 && writer_->read_slot(t.index, e) && e.index == t.index ? e.flags : 0;
  writer_->set_first_error(t.index, result, t.op, text, flags);
}

void Recorder::nccl_version(int version) noexcept { store_relaxed(writer_->header().nccl_version, version); }

}  // namespace hangshim::shim
