#include "shim/core/watchdog.h"

#include <signal.h>
#include <sys/prctl.h>
#include <time.h>

#include <fmt/format.h>

#include "shim/core/callsite_capture.h"
#include "shim/core/log.h"
#include "shim/core/recorder.h"
#include "shim/core/stack_dump.h"

namespace hangshim::shim {

using namespace hangshim::ledger;

namespace {

void sleep_ms(uint32_t ms) {
  timespec left{static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000L};
  while (nanosleep(&left, &left) != 0) {
  }
}

std::string base_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

Watchdog::Watchdog(Recorder& recorder) : r_(recorder) {}

bool Watchdog::start() noexcept {
  // Signals stay with the application's threads: the watchdog blocks them all.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 1 << 20);
  pthread_t thread;
  running_.store(true);
  bool ok = pthread_create(&thread, &attr, &Watchdog::main, this) == 0;
  if (!ok) running_.store(false);
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return ok;
}

bool Watchdog::stop(uint32_t wait_ms) noexcept {
  stop_.store(true, std::memory_order_release);
  for (uint32_t waited = 0; running_.load(std::memory_order_acquire) && waited < wait_ms; ++waited) sleep_ms(1);
  return !running_.load(std::memory_order_acquire);
}

void* Watchdog::main(void* self) {
  auto* w = static_cast<Watchdog*>(self);
  prctl(PR_SET_NAME, "hangshim-watch", 0, 0, 0);
  uint32_t poll = w->r_.config().poll_ms;
  while (!w->stop_.load(std::memory_order_acquire)) {
    w->tick(wall_ns());
    for (uint32_t slept = 0; slept < poll && !w->stop_.load(std::memory_order_acquire); slept += 10) {
      sleep_ms(std::min<uint32_t>(10, poll - slept));
    }
  }
  w->running_.store(false, std::memory_order_release);
  return nullptr;
}

void Watchdog::tick(uint64_t now) noexcept {
  calibrate_clock();
  r_.writer().heartbeat(now);
  poll_completions(now);
  check_stall(now);
}

void Watchdog::poll_completions(uint64_t now) noexcept {
  CudaCompletion* cuda = r_.completion();
  if (cuda == nullptr) return;
  bool any = false;
  cuda->poll([&](const PendingCompletion& p, bool ok) {
    any = true;
    r_.complete(p.index, p.comm, p.seq, p.p2p, now, ok ? 0 : kRecordUntracked);
  });
  if (any) r_.writer().add_features(kFeatureCudaCompletion);
}

void Watchdog::check_stall(uint64_t now) noexcept {
  Writer& w = r_.writer();
  uint64_t head = w.ring_head();
  uint64_t capacity = w.ring_capacity();
  if (head >= capacity && cursor_ < head - capacity + 1) cursor_ = head - capacity + 1;
  RingEntry e{};
  bool pending = false;
  for (uint64_t i = cursor_; i <= head; ++i) {
    if (!w.read_slot(i, e)) break;  // being written: look again next tick
    if (e.index > i) {              // replaced by a newer record
      if (i == cursor_) ++cursor_;
      continue;
    }
    if (e.index < i) break;  // claimed, not written yet
    if (e.completed_ns != 0) {
      if (i == cursor_) {
        learn(e);  // each record once: the cursor passes it once
        ++cursor_;
      }
      continue;
    }
    pending = true;  // the oldest call not completed
    break;
  }
  if (reported_ != 0 && (!pending || e.index != reported_)) {
    reported_ = 0;  // the stalled call completed after all
    w.set_state(ProcessState::Running);
  }
  if (!pending || e.index == reported_ || now <= e.issued_ns) return;
  uint64_t limit = limit_ns(e);
  if (now - e.issued_ns >= limit) {
    reported_ = e.index;
    report_stall(e, now, limit);
  }
}

void Watchdog::learn(const RingEntry& e) noexcept {
  if (r_.config().stall_seconds != 0) return;  // a fixed limit: nothing to learn
  // Calls that never ran (simulated groups, graph captures) and failed calls say nothing about
  // how long this call-site's calls wait.
  if ((e.flags & (kRecordSimulated | kRecordCaptured)) != 0) return;
  if (e.result != 0 && e.result != 7 /* ncclInProgress */) return;
  if (e.completed_ns < e.issued_ns) return;
  model_.learn(ledger::StallModel::key(e.comm, e.callsite, e.op), e.completed_ns - e.issued_ns);
}

uint64_t Watchdog::limit_ns(const RingEntry& e) const noexcept {
  uint32_t fixed = r_.config().stall_seconds;
  return fixed != 0 ? uint64_t{fixed} * 1000000000ull : model_.limit_ns(ledger::StallModel::key(e.comm, e.callsite, e.op));
}

void Watchdog::report_stall(const RingEntry& e, uint64_t now, uint64_t limit) noexcept {
  try {
    Writer& w = r_.writer();
    Header& h = w.header();
    std::string what = fmt::format("{} #{}", (e.flags & kRecordBarrier) != 0 ? "barrier" : op_name(e.op), e.seq);
    if (e.seq == 0) what = op_name(e.op);
    std::string where;
    if (CallsiteCapture* sites = r_.callsites(); sites != nullptr && e.callsite != 0) {
      where = fmt::format(", from {} (iteration {})", sites->describe(e.callsite), e.callsite_hit);
    }
    uint64_t seconds = (now - e.issued_ns) / 1000000000ull;
    std::string state = e.returned_ns == 0 ? fmt::format("inside {} for {} s", what, seconds)
                                           : fmt::format("{} issued {} s ago, not completed", what, seconds);
    std::string rank = h.rank >= 0 ? fmt::format("rank {}", h.rank) : std::string("process");
    std::string comm = e.comm_key != 0 ? fmt::format(" on comm {:016x}", e.comm_key) : "";
    std::string basis;
    if (r_.config().stall_seconds != 0) {
      basis = "HANGSHIM_STALL_SECONDS";
    } else if (uint32_t n = model_.samples(ledger::StallModel::key(e.comm, e.callsite, e.op)); n < model_.settings().min_samples) {
      basis = n == 0 ? "a call-site not seen before" : fmt::format("a call-site seen {} time{} before", n, n == 1 ? "" : "s");
    } else {
      basis = fmt::format("learned from its {} earlier calls", n);
    }
    std::string reason = fmt::format("{} (pid {} on {}) stalled: {}{}{} (limit {:.3g} s: {})", rank, h.pid, h.host, state,
                                     comm, where, static_cast<double>(limit) / 1e9, basis);

    store_relaxed(h.stall_record, e.index);
    store_relaxed(h.stall_ns, now);
    store_relaxed(h.stall_limit_ms, static_cast<uint32_t>(std::min<uint64_t>(limit / 1000000, UINT32_MAX)));
    fetch_add_relaxed(h.stall_count, uint32_t{1});
    std::string stacks = r_.stacks_path();
    std::string failed = write_python_stacks(stacks, r_.callsites(), reason);
    if (failed.empty()) w.set_text(h.stacks_file, sizeof(h.stacks_file), base_name(stacks));
    w.set_state(ProcessState::Stalled);
    print_line(fmt::format("{}; ledger {}{}; run: hangshim report {}", reason, w.path(),
                           failed.empty() ? fmt::format(", Python stacks {}", stacks)
                                          : fmt::format(" (Python stacks not written to {}: {})", stacks, failed),
                           r_.ledger_dir()));
  } catch (...) {
    r_.writer().set_state(ProcessState::Stalled);
  }
}

}  // namespace hangshim::shim
