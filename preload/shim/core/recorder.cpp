// Creation of the process's recorder (first NCCL call), fork and exit handling.
#include "shim/core/recorder.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

#include "shim/core/callsite_capture.h"
#include "shim/core/clock.h"
#include "ledger/directory.h"
#include "ledger/identity.h"
#include "ledger/names.h"
#include "shim/core/log.h"
#include "shim/core/watchdog.h"

namespace hangshim::shim {

namespace {

enum : int { kUninitialized = 0, kReady = 1, kOff = 2 };

std::atomic<int> g_state{kUninitialized};
std::atomic<Recorder*> g_recorder{nullptr};
// A pointer so that a fork child can replace it: the parent's may have been held by a thread
// that does not exist in the child.
std::atomic<std::mutex*> g_init_mutex{new std::mutex};
std::atomic<NcclQueries*> g_queries{nullptr};

__attribute__((tls_model("initial-exec"))) thread_local uint32_t t_tid = 0;

std::string read_command_line() {
  int fd = ::open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char buffer[512];
  ssize_t n = ::read(fd, buffer, sizeof(buffer));
  ::close(fd);
  if (n <= 0) return {};
  std::string out(buffer, static_cast<size_t>(n));
  while (!out.empty() && out.back() == '\0') out.pop_back();
  for (char& c : out) {
    if (c == '\0') c = ' ';
  }
  return out;
}

std::string host_name() {
  std::string host = ledger::this_host();
  return host.empty() ? "unknown" : host;
}

// Fork child: forget the parent's recorder without touching its locks or containers (another
// parent thread may have been in the middle of using them). Its ledger mapping is dropped so
// nothing in the child can write into the parent's ledger; the child makes its own ledger at
// its first NCCL call. The rest is leaked on purpose: one small, copy-on-write allocation.
void forget_after_fork() {
  Recorder* parent = g_recorder.load(std::memory_order_relaxed);
  g_recorder.store(nullptr, std::memory_order_relaxed);
  g_state.store(kUninitialized, std::memory_order_relaxed);
  g_init_mutex.store(new std::mutex, std::memory_order_release);
  reset_thread_group_state();
  if (parent != nullptr) parent->writer().abandon();
}

void exit_handler() {
  Recorder* r = g_recorder.load(std::memory_order_acquire);
  if (r != nullptr) r->on_exit();
}

}  // namespace

uint32_t current_tid() noexcept {
  if (t_tid == 0) t_tid = static_cast<uint32_t>(::syscall(SYS_gettid));
  return t_tid;
}

void Recorder::set_queries(const NcclQueries& queries) noexcept {
  if (g_queries.load(std::memory_order_acquire) != nullptr) return;
  auto* copy = new (std::nothrow) NcclQueries(queries);
  NcclQueries* expected = nullptr;
  if (copy != nullptr && !g_queries.compare_exchange_strong(expected, copy)) delete copy;
}

const NcclQueries* current_queries() noexcept { return g_queries.load(std::memory_order_acquire); }

Recorder* Recorder::instance() noexcept {
  int state = g_state.load(std::memory_order_acquire);
  if (state == kReady) return g_recorder.load(std::memory_order_relaxed);
  if (state == kOff) return nullptr;
  std::lock_guard<std::mutex> lock(*g_init_mutex.load(std::memory_order_acquire));
  if (g_state.load(std::memory_order_relaxed) == kUninitialized) {
    Recorder* made = create();
    g_recorder.store(made, std::memory_order_relaxed);
    g_state.store(made != nullptr ? kReady : kOff, std::memory_order_release);
  }
  return g_recorder.load(std::memory_order_relaxed);
}

Recorder* Recorder::existing() noexcept {
  return g_state.load(std::memory_order_acquire) == kReady ? g_recorder.load(std::memory_order_relaxed) : nullptr;
}

Recorder* Recorder::create() noexcept {
  try {
    static std::once_flag process_hooks;
    std::call_once(process_hooks, [] {
      pthread_atfork(nullptr, nullptr, forget_after_fork);
      std::atexit(exit_handler);
    });
    uint32_t uid = static_cast<uint32_t>(::geteuid());
    Config config = read_config([](const char* name) { return std::getenv(name); }, uid);
    for (const auto& w : config.warnings) warn_once(w);
    if (config.disabled) return nullptr;

    std::unique_ptr<Recorder> r(new Recorder());
    r->config_ = config;
    r->pid_ = ::getpid();
    r->host_ = host_name();
    r->dir_ = config.dir;
    if (auto made = ledger::prepare_directory(config.dir, uid); !made) {
      warn_once(fmt::format("recording off: {}{}", made.error().message,
                            made.error().hint.empty() ? "" : fmt::format(" ({})", made.error().hint)));
      return nullptr;
    }
    calibrate_clock();  // the first point; the watchdog completes the measurement
    uint64_t start = wall_ns();
    ledger::sweep_dead_ledgers(config.dir, r->host_, start, config.keep_seconds);

    RankIdentity rank = read_rank_identity([](const char* name) { return std::getenv(name); });
    ledger::Identity identity;
    identity.pid = r->pid_;
    identity.ppid = ::getppid();
    identity.uid = uid;
    identity.rank = rank.rank;
    identity.world_size = rank.world_size;
    identity.local_rank = rank.local_rank;
    identity.job = rank.job;
    identity.start_ns = start;
    identity.stall_seconds = config.stall_seconds;
    identity.host = r->host_;
    identity.command = read_command_line();
    identity.shim_version = HANGSHIM_VERSION;
    identity.parent_start = ledger::process_start_ticks(identity.ppid);
    identity.slurm_job = rank.slurm_job;
    identity.run_id = rank.run_id;
    identity.master = rank.master;
    identity.launcher = rank.launcher;
    ledger::Geometry geometry;
    geometry.ring_capacity = config.ring;
    geometry.callsite_depth = config.callsite_depth;
    std::string name = ledger::ledger_file_name(r->host_, r->pid_, rank.rank);
    auto writer = ledger::Writer::create(config.dir + "/" + name, geometry, identity);
    if (!writer) {
      warn_once(fmt::format("recording off: {}{}", writer.error().message,
                            writer.error().hint.empty() ? "" : fmt::format(" ({})", writer.error().hint)));
      return nullptr;
    }
    r->writer_ = std::move(writer.value());
    r->detail_attempts_ = std::make_unique<std::atomic<uint8_t>[]>(r->writer_->header().comm_capacity);
    if (const NcclQueries* q = current_queries(); q != nullptr && q->get_version != nullptr) {
      int version = 0;
      if (q->get_version(&version) == 0) ledger::store_relaxed(r->writer_->header().nccl_version, version);
    }
    r->stacks_path_ = config.dir + "/" + ledger::stacks_file_name(name);
    if (config.callsites) {
      r->callsites_ = std::make_unique<CallsiteCapture>(*r->writer_, config);
      r->writer_->add_features(ledger::kFeatureCallsites);
    }
    // Events are polled by the watchdog: without it, completion is the return. Decided before
    // the thread starts (it reads the setting).
    r->cuda_enabled_ = config.cuda_events && config.watchdog;
    if (config.watchdog) {
      r->watchdog_ = std::make_unique<Watchdog>(*r);
      if (r->watchdog_->start()) {
        r->writer_->add_features(ledger::kFeatureWatchdog);
        if (config.stall_seconds == 0) r->writer_->add_features(ledger::kFeatureLearnedStall);
      } else {
        r->cuda_enabled_ = false;  // no thread was made: nothing reads it concurrently
      }
    }
    return r.release();
  } catch (...) {
    warn_once("recording off: out of memory while starting");
    return nullptr;
  }
}

Recorder::~Recorder() = default;

void Recorder::on_exit() noexcept {
  if (pid_ != ::getpid()) return;  // a fork child running its parent's handlers
  // Our handler was registered after the application's CUDA set-up, so it runs before CUDA's
  // own exit handlers: the driver is still there for a last look at pending events.
  if (watchdog_ && watchdog_->stop(200)) watchdog_->poll_completions(wall_ns());
  ledger::Header& h = writer_->header();
  ledger::store_relaxed(h.exit_ns, now_ns());
  writer_->set_state(ledger::ProcessState::Exited);
}

}  // namespace hangshim::shim
