// The hot path: recording collectives and point-to-point calls, and ncclGroupStart/End.
//
// Per call: one comm-table lookup, two sequence counters, an optional call-site capture (a
// cache hit after the first sighting), one ring entry written under its stamp, and at return
// one more stamped write. No allocation, no lock, no syscall (clock_gettime is the vDSO's).
#include <vector>

#include "shim/core/callsite_capture.h"
#include "shim/core/recorder.h"

namespace hangshim::shim {

using namespace hangshim::ledger;

namespace {

// A record issued inside ncclGroupStart/End: it completes with the group.
struct GroupMember {
  uint64_t index;
  uint64_t seq;
  uint32_t comm;
  bool p2p;
  void* stream;
  Op op;
  uint32_t callsite;  // 0: none
};

struct GroupState {
  uint32_t depth = 0;
  uint64_t id = 0;
  std::vector<GroupMember> members;  // capacity kept between groups: no steady-state allocation
};

// Initial-exec TLS: no __tls_get_addr call on the hot path (the shim is preloaded).
__attribute__((tls_model("initial-exec"))) thread_local GroupState t_group;

// ncclInProgress (nonblocking) is not a failure: the ledger's rule (format.h).
bool failed(int result) { return is_failure(result); }

}  // namespace

void reset_thread_group_state() noexcept {
  t_group.depth = 0;
  t_group.id = 0;
  t_group.members.clear();
}

RecordStart Recorder::start_record(Op op, uint32_t comm, uint64_t now) noexcept {
  RecordStart s;
  s.op = op;
  s.comm = comm;
  s.issued_ns = now;
  s.thread = current_tid();
  if (CommEntry* c = writer_->comm(comm)) s.comm_key = load_relaxed(c->key);
  if (t_group.depth > 0) {
    s.flags |= kRecordInGroup;
    s.group = t_group.id;
  }
  return s;
}

CallToken Recorder::begin(const CallInfo& call) noexcept {
  CallToken t;
  uint64_t now = now_ns();
  t.op = call.op;
  t.stream = call.stream;
  t.issued_ns = now;
  t.comm = comm_id(call.comm);
  bool p2p = is_p2p(call.op);
  if (CommEntry* c = writer_->comm(t.comm)) {
    t.seq = add_single_writer(p2p ? c->p2p_issued : c->coll_issued, uint64_t{1}) + 1;
    if (has_op_count(call.op)) add_single_writer(c->op_counts[static_cast<int>(call.op) - 1], uint64_t{1});
    if (load_relaxed(c->device) < 0 || load_relaxed(c->rank) < 0) learn_comm_details(t.comm, call.comm);
  }
  RecordStart s = start_record(call.op, t.comm, now);
  s.seq = t.seq;
  s.count = call.count;
  s.stream = reinterpret_cast<uint64_t>(call.stream);
  s.dtype = call.dtype >= 0 && call.dtype < 255 ? static_cast<uint8_t>(call.dtype) : uint8_t{255};
  s.red_op = call.red_op;
  s.peer = call.peer;
  s.flags |= call.flags;
  if (callsites_) {
    CallsiteHit hit = callsites_->capture();
    s.callsite = hit.id;
    s.callsite_hit = hit.hit;
    if ((hit.flags & kCallsiteBarrier) != 0 && call.op == Op::AllReduce && call.count == 1) s.flags |= kRecordBarrier;
    if ((hit.flags & kCallsiteBorrowed) != 0) s.flags |= kRecordBorrowedStack;
  }
  t.in_group = t_group.depth > 0;
  t.index = writer_->begin_record(s);
  if (t.in_group) {
    try {
      t_group.members.push_back({t.index, t.seq, t.comm, p2p, call.stream, call.op, s.callsite});
    } catch (...) {
      t.in_group = false;  // out of memory: completes at return instead of with the group
    }
  }
  return t;
}

void Recorder::complete(uint64_t index, uint32_t comm, uint64_t seq, bool p2p, uint64_t now, uint16_t flags) noexcept {
  writer_->record_completed(index, now, flags);
  if (CommEntry* c = writer_->comm(comm); c != nullptr && seq != 0) {
    store_max_relaxed(p2p ? c->p2p_completed : c->coll_completed, seq);
  }
}

void Recorder::end(const CallToken& t, int result) noexcept {
  if (t.index == 0) return;
  uint64_t now = now_ns();
  bool p2p = is_p2p(t.op);
  if (failed(result)) {
    // The operation will not run: done, with its error (not counted as completed).
    writer_->record_returned(t.index, now, result, 0, now);
    return;
  }
  if (t.in_group) {
    writer_->record_returned(t.index, now, result, 0, 0);  // completes with ncclGroupEnd
    return;
  }
  if (result == kInProgressResult) {  // not launched yet (record_in_progress.cpp)
    writer_->record_returned(t.index, now, result, kRecordInProgress, 0);
    note_in_progress(t.comm);
    return;
  }
  uint16_t flags = 0;
  bool done = true;
  // Window (de)registration runs on the host, synchronously: done when it returns.
  if (!is_window(t.op) && cuda_enabled_ && completion_.available(now)) {
    PendingCompletion pending{t.index, t.seq, t.comm, p2p, nullptr, nullptr, false};
    switch (completion_.track(pending, static_cast<CUstream>(t.stream))) {
      case CudaCompletion::Track::Tracked:
        flags = kRecordEventTracked;  // the watchdog completes it when the event fires
        done = false;
        break;
      case CudaCompletion::Track::Captured:
        flags = kRecordCaptured;  // captured into a CUDA graph: runs at replay, which NCCL never sees
        break;
      case CudaCompletion::Track::Failed:
        flags = kRecordUntracked;
        break;
    }
  }
  writer_->record_returned(t.index, now, result, flags, done ? now : 0);
  if (done) {
    if (CommEntry* c = writer_->comm(t.comm); c != nullptr && t.seq != 0) {
      store_max_relaxed(p2p ? c->p2p_completed : c->coll_completed, t.seq);
    }
  }
}

void Recorder::group_start() noexcept {
  if (t_group.depth++ == 0) t_group.id = groups_.fetch_add(1, std::memory_order_relaxed) + 1;
}

void Recorder::group_simulate_end(int result) noexcept {
  if (t_group.depth == 0) return;
  if (--t_group.depth > 0) return;  // an inner level only closes its level, as ncclGroupEnd does
  uint64_t now = now_ns();
  // Newest first, so each communicator's counter steps back over exactly the numbers this
  // group took (NCCL forbids using one communicator from two threads at once).
  auto& members = t_group.members;
  for (size_t i = members.size(); i-- > 0;) {
    const GroupMember& m = members[i];
    writer_->record_completed(m.index, now, kRecordSimulated);
    if (CommEntry* c = writer_->comm(m.comm); c != nullptr && m.seq != 0) {
      add_single_writer(m.p2p ? c->p2p_issued : c->coll_issued, ~uint64_t{0});
      if (has_op_count(m.op)) add_single_writer(c->op_counts[static_cast<int>(m.op) - 1], ~uint64_t{0});
    }
    if (callsites_) {
      callsites_->give_back(m.callsite);
    } else {
      writer_->give_back_callsite_hit(m.callsite);
    }
  }
  members.clear();
  (void)result;  // failed or not, nothing of the group ran
}

void Recorder::group_end(int result) noexcept {
  if (t_group.depth == 0) return;  // unbalanced ncclGroupEnd: NCCL reports it, we ignore it
  if (--t_group.depth > 0) return;  // only the outermost ncclGroupEnd launches the group
  uint64_t now = now_ns();
  fetch_add_relaxed(writer_->header().group_count, uint64_t{1});
  auto& members = t_group.members;
  if (result == kInProgressResult) {  // a nonblocking group, not launched yet (record_in_progress.cpp)
    for (const GroupMember& m : members) {
      writer_->record_settled(m.index, kInProgressResult, 0, kRecordInProgress);
      note_in_progress(m.comm);
    }
    members.clear();
    return;
  }
  if (failed(result) || !cuda_enabled_ || !completion_.available(now)) {
    for (const GroupMember& m : members) complete(m.index, m.comm, m.seq, m.p2p, now, 0);
    members.clear();
    return;
  }
  // One event per stream (a group rarely uses more than one), shared by its members; the
  // last member on a stream returns the event to the pool when it completes.
  struct StreamEvent {
    void* stream;
    CUevent event;
    CUcontext context;
    CudaCompletion::Track track;
    size_t last;
  };
  constexpr size_t kMaxStreams = 16;
  StreamEvent streams[kMaxStreams];
  size_t stream_count = 0;
  auto find = [&](void* stream) -> StreamEvent* {
    for (size_t k = 0; k < stream_count; ++k) {
      if (streams[k].stream == stream) return &streams[k];
    }
    return nullptr;
  };
  for (size_t i = 0; i < members.size(); ++i) {
    StreamEvent* s = find(members[i].stream);
    if (s == nullptr && stream_count < kMaxStreams) {
      s = &streams[stream_count++];
      *s = {members[i].stream, nullptr, nullptr, CudaCompletion::Track::Failed, i};
    }
    if (s != nullptr) s->last = i;
  }
  for (size_t k = 0; k < stream_count; ++k) {
    streams[k].track = completion_.record_shared(static_cast<CUstream>(streams[k].stream), &streams[k].event,
                                                 &streams[k].context);
  }
  for (size_t i = 0; i < members.size(); ++i) {
    const GroupMember& m = members[i];
    StreamEvent* s = find(m.stream);
    if (s != nullptr && s->track == CudaCompletion::Track::Tracked) {
      writer_->record_completed(m.index, 0, kRecordEventTracked);
      completion_.add_pending({m.index, m.seq, m.comm, m.p2p, s->event, s->context, i == s->last});
      continue;
    }
    bool captured = s != nullptr && s->track == CudaCompletion::Track::Captured;
    complete(m.index, m.comm, m.seq, m.p2p, now, captured ? kRecordCaptured : kRecordUntracked);
  }
  members.clear();
}

}  // namespace hangshim::shim
