// Calls on nonblocking communicators (ncclConfig_t.blocking = 0) that return ncclInProgress:
// collectives, point-to-point calls, groups, and the init itself.
//
// NCCL has not launched such a call yet: it runs the group's set-up in the background and says
// ncclInProgress from ncclCommGetAsyncError until the work is on its stream (then ncclSuccess)
// or failed (the error). So the record is neither done nor failed at return: it keeps
// result ncclInProgress and kRecordInProgress, and the communicator counts it. The next
// ncclCommGetAsyncError that answers for the communicator settles its in-progress records:
// ncclSuccess starts completion tracking as at a blocking call's return (a CUDA event, or done
// now without one); an error closes them with it. A rare path (one poll per transition), so a
// scan of the ring is fine; the hot path only adds one flag and one counter.
#include "shim/core/clock.h"
#include "shim/core/recorder.h"

namespace hangshim::shim {

using namespace hangshim::ledger;

void Recorder::note_in_progress(uint32_t comm) noexcept {
  if (CommEntry* c = writer_->comm(comm); c != nullptr) fetch_add_relaxed(c->in_progress, uint32_t{1});
}

void Recorder::settle_in_progress(uint32_t comm, int async_error, uint64_t asked_ns, const char* error_text) noexcept {
  CommEntry* c = writer_->comm(comm);
  if (c == nullptr || load_relaxed(c->in_progress) == 0) return;
  // One settler at a time: whoever takes the count scans; a count that grows meanwhile (a new
  // call in progress) is left for the next poll.
  uint32_t waiting = __atomic_exchange_n(&c->in_progress, uint32_t{0}, __ATOMIC_ACQ_REL);
  if (waiting == 0) return;
  uint64_t now = now_ns();
  bool track = async_error == 0 && cuda_enabled_ && completion_.available(now);
  uint64_t head = load_relaxed(writer_->header().ring_head);
  uint64_t span = writer_->ring_capacity();
  uint32_t left = 0;  // in progress, but returned after this poll began: its own poll settles it
  for (uint64_t index = head; index > 0 && head - index < span && waiting > 0; --index) {
    RingEntry e;
    if (!writer_->read_slot(index, e) || e.index != index || e.comm != comm) continue;
    if ((e.flags & kRecordInProgress) == 0 || e.completed_ns != 0 || (e.flags & kRecordEventTracked) != 0) continue;
    if (e.result != kInProgressResult) continue;  // already settled
    --waiting;
    if (e.returned_ns > asked_ns) {
      ++left;
      continue;
    }
    Op op = static_cast<Op>(e.op);
    bool p2p = is_p2p(op);
    if (async_error != 0) {
      writer_->record_settled(index, async_error, now, 0);  // failed: done with its error, not completed
      writer_->set_first_error(index, async_error, op, error_text);  // kept if it is the process's first
      continue;
    }
    if (!is_counted(op)) {  // a nonblocking init: the communicator is ready
      writer_->record_settled(index, 0, now, 0);
      continue;
    }
    if (track && !is_window(op)) {  // window (de)registration runs on the host: done now
      PendingCompletion pending{index, e.seq, comm, p2p, nullptr, nullptr, false};
      switch (completion_.track(pending, reinterpret_cast<CUstream>(e.stream))) {
        case CudaCompletion::Track::Tracked:
          writer_->record_settled(index, 0, 0, kRecordEventTracked);
          continue;
        case CudaCompletion::Track::Captured:
          writer_->record_settled(index, 0, 0, 0);
          complete(index, comm, e.seq, p2p, now, kRecordCaptured);
          continue;
        case CudaCompletion::Track::Failed:
          break;
      }
    }
    writer_->record_settled(index, 0, 0, 0);
    complete(index, comm, e.seq, p2p, now, track ? kRecordUntracked : 0);
  }
  if (left > 0) fetch_add_relaxed(c->in_progress, left);
}

}  // namespace hangshim::shim
