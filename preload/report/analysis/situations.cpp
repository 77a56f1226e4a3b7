// Where each rank is: in a collective (its oldest pending one), in a send/recv, joining a
// communicator, outside NCCL, exited, or dead (gone without exiting, or its heartbeat stopped);
// with the last collective it completed and, when it runs here, the line its main thread is at.
#include <algorithm>

#include <fmt/format.h>

#include "report/analysis/analysis.h"
#include "report/analysis/split_in_parallel.h"

namespace hangshim::report {


using namespace hangshim::ledger;

namespace {

bool initializing(const RankView& v, uint32_t comm) {
  const CommInfo* c = v.comm(comm);
  return c != nullptr && c->state == static_cast<uint32_t>(CommState::Initializing);
}

bool is_init(Op op) {
  return op == Op::CommInitRank || op == Op::CommInitAll || op == Op::CommInitRankScalable || op == Op::CommSplit ||
         op == Op::CommShrink;
}

std::string seconds(uint64_t ns) { return fmt::format("{:.0f} s", static_cast<double>(ns) / 1e9); }

}  // namespace

void Analysis::place_ranks() {
  // Heartbeats are compared with the newest one seen: ledgers copied off a node some time ago
  // are all old, and only a rank whose heartbeat stopped before the others' is dead.
  uint64_t newest_heartbeat = 0;
  for (const auto& v : in.ranks) {
    if ((v.header.features & kFeatureWatchdog) != 0 && v.header.state != static_cast<uint32_t>(ProcessState::Exited)) {
      newest_heartbeat = std::max(newest_heartbeat, v.header.heartbeat_ns);
    }
  }
  // A rank whose process is gone while others of the job still run on their hosts died first
  // (killed, crashed): its heartbeat may be too recent to tell, its ledger shows no exit.
  size_t alive_ranks = 0;
  for (const auto& v : in.ranks) {
    alive_ranks += v.liveness == Liveness::Alive && v.header.state != static_cast<uint32_t>(ProcessState::Exited) ? 1 : 0;
  }
  situations.resize(in.ranks.size());
  record_marks_.assign(in.ranks.size(), 0);
  // Each rank's place depends on its own view and the two figures above only.
  split_in_parallel(in.ranks.size(), threads_for(in.ranks.size(), 4096), [&](size_t, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) place_rank(i, newest_heartbeat, alive_ranks);
  });
}

void Analysis::place_rank(size_t i, uint64_t newest_heartbeat, size_t alive_ranks) {
  const RankView& v = in.ranks[i];
  RankSituation& s = situations[i];
  uint8_t marks = kInRingOrder;
  uint64_t previous_index = 0;
  for (size_t k = 0; k < v.records.size(); ++k) {
    const CallRecord& r = v.records[k];
    if ((r.flags & kRecordCaptured) != 0) marks |= kHasCaptured;
    if (is_comm_init(static_cast<Op>(r.op)) && is_failure(r.result)) marks |= kHasFailedInit;
    if (static_cast<Op>(r.op) == Op::CommAbort) marks |= kHasAbort;
    if (k > 0 && r.index <= previous_index) marks &= static_cast<uint8_t>(~kInRingOrder);
    previous_index = r.index;
  }
  record_marks_[i] = marks;
  s.rank = v.rank;
  s.pid = v.header.pid;
  s.host = v.header.host;
  s.liveness = v.liveness;

  const CallRecord* oldest_collective = nullptr;
  const CallRecord* oldest_p2p = nullptr;
  const CallRecord* oldest_init = nullptr;
  const CallRecord* last_done = nullptr;
  for (const auto& r : v.records) {
    Op op = static_cast<Op>(r.op);
    if (pending(i, r)) {
      if (is_collective(op) && oldest_collective == nullptr) oldest_collective = &r;
      if (is_p2p(op) && oldest_p2p == nullptr) oldest_p2p = &r;
      // Inside the call; or a nonblocking init (ncclInProgress) whose communicator is not set
      // up yet: the rank polls ncclCommGetAsyncError while the others join, in init as much
      // as a blocking call that has not returned.
      bool in_init = r.returned_ns == 0 || (r.result == kInProgressResult && initializing(v, r.comm));
      if (is_init(op) && oldest_init == nullptr && in_init) oldest_init = &r;
    } else if (is_collective(op) && (r.result == 0 || r.result == kInProgressResult)) {
      last_done = &r;
    } else if (is_init(op) && oldest_init == nullptr && r.result == kInProgressResult && initializing(v, r.comm)) {
      // The same, as earlier shims recorded it: completed at its return (an old ledger).
      oldest_init = &r;
    }
  }
  if (last_done != nullptr) s.last = call(i, *last_done);
  const CallRecord* current = oldest_collective != nullptr ? oldest_collective
                              : oldest_p2p != nullptr      ? oldest_p2p
                                                           : oldest_init;
  uint64_t reference = v.observed_ns;
  if (newest_heartbeat != 0) reference = std::min(reference, newest_heartbeat);
  bool watched = (v.header.features & kFeatureWatchdog) != 0 && v.header.heartbeat_ns != 0;
  if (watched && reference > v.header.heartbeat_ns) s.heartbeat_age_ns = reference - v.header.heartbeat_ns;
  bool stale = watched && s.heartbeat_age_ns > options.heartbeat_timeout_ns;

  // Dead: its last sign of life is older than the others' (it died first: killed, crashed or
  // frozen), or it is gone and left no heartbeat to tell when, or it is gone while other ranks
  // still run. Ranks that all stopped together
  // (the job was killed after hanging) keep the positions their ledgers show.
  bool gone = v.liveness == Liveness::Gone || v.liveness == Liveness::Recycled;
  if (v.header.state == static_cast<uint32_t>(ProcessState::Exited)) {
    s.state = RankState::Exited;
  } else if (stale) {
    s.state = RankState::Dead;
    s.why_dead = v.liveness == Liveness::Alive
                     ? fmt::format("no heartbeat for {}, though pid {} still runs: stopped or frozen",
                                   seconds(s.heartbeat_age_ns), v.header.pid)
                     : fmt::format("its heartbeat stopped {} before the others' latest: killed, crashed or frozen",
                                   seconds(s.heartbeat_age_ns));
  } else if (gone && (!watched || alive_ranks > 0)) {
    s.state = RankState::Dead;
    s.why_dead = alive_ranks > 0
                     ? fmt::format("pid {} is gone from {} without exiting normally while other ranks still run "
                                   "(killed or crashed)",
                                   v.header.pid, v.judged_on)
                     : fmt::format("pid {} is gone from {} without exiting normally (killed or crashed)",
                                   v.header.pid, v.judged_on);
  } else if (current != nullptr) {
    Op op = static_cast<Op>(current->op);
    s.state = is_collective(op) ? RankState::InCollective : is_p2p(op) ? RankState::InP2P : RankState::InCommInit;
  } else {
    s.state = RankState::OutsideNccl;
  }
  if (gone && s.state != RankState::Exited && s.state != RankState::Dead) {
    s.why_dead = fmt::format("pid {} is gone from {} since (killed with the others)", v.header.pid, v.judged_on);
  }
  if (current != nullptr) {  // kept for the dead too: "died inside all_reduce #5"
    s.current = call(i, *current);
    if (reference > current->issued_ns) s.waiting_ns = reference - current->issued_ns;
  }
  if (v.stacks >= 0) {
    const pyframes::Process& p = in.stacks[static_cast<size_t>(v.stacks)];
    if (const pyframes::Thread* t = main_thread(p)) {
      if (const pyframes::Frame* f = user_frame(*t, options.patterns)) {
        s.now_at = Site{f->file, f->qualname.empty() ? f->function : f->qualname, f->line};
      }
      if (!t->frames.empty()) s.now_function = t->frames.front().function;
    }
  }
}

}  // namespace hangshim::report
