#include "shim/core/callsite_capture.h"

#include <dlfcn.h>
#include <unistd.h>

#include <fmt/format.h>

#include "pyframes/proc_maps.h"
#include "pyframes/pyframes.h"
#include "shim/core/hash.h"
#include "shim/core/log.h"
#include "shim/core/recorder.h"

namespace hangshim::shim {

using namespace hangshim::ledger;
using pyframes::CodeLocation;

namespace {

std::atomic<uint64_t> g_main_thread{0};
std::atomic<uint64_t> g_capture_serial{0};  // numbers each CallsiteCapture (a fork child's too)

// This thread's last captures of its own frames: the frames as the walk read them and the
// call-site they gave. A call from one of those places reads just those frames again (no code
// objects, no chain hash, no cache probe): in a training loop nearly every call, the loop
// calling NCCL from a few places in turn (a memo that does not match usually differs at the
// innermost frame, so trying the others is cheap). Initial-exec TLS like the shim's other
// thread-locals (no __tls_get_addr): the preloaded shim's static TLS is sized at start-up. A
// copy loaded with dlopen needs its whole TLS block (~4 KiB with this) from glibc's small
// static TLS reserve and fails to load ("cannot allocate memory in static TLS block"), so the
// benchmark preloads its probe library.
struct OwnMemo {
  uint64_t serial = 0;  // the CallsiteCapture it belongs to; 0: none
  uint64_t tstate = 0;
  uint32_t id = 0;
  uint32_t flags = 0;
  uint32_t counter = 0;
  pyframes::OwnFramesRecord frames;
};
struct OwnMemos {
  static constexpr uint32_t kCount = 4;
  OwnMemo memo[kCount];
  uint32_t next = 0;  // the one the next new place replaces (round robin)
};
__attribute__((tls_model("initial-exec"))) thread_local OwnMemos t_own_memos;
constexpr uint64_t kRetryNs = 1000000000ull;  // Python not up yet / main thread not found: retry after 1 s

// The cache key of a chain. Only this process ever sees it (code object addresses), so it need
// not be the ledger's portable Hasher: one multiply per frame and one finalizer, instead of two
// dependent finalizers per frame (which cost more than the frame walk's reads on a 16-deep
// chain). Collisions only cost a compare: find() checks the whole chain.
uint64_t hash_chain(const CodeLocation* chain, size_t depth, bool borrowed) noexcept {
  uint64_t h = borrowed ? 0x626f72726f776564ull : 0x6f776e6672616d65ull;
  for (size_t i = 0; i < depth; ++i) {
    uint64_t offset = static_cast<uint32_t>(chain[i].instruction_offset);
    h = (h ^ chain[i].code_object ^ (offset << 47 | offset >> 17)) * 0x9e3779b97f4a7c15ull;
  }
  return mix64(h) | 1;  // never 0
}

bool same_chain(const CodeLocation* a, const CodeLocation* b, size_t depth) noexcept {
  for (size_t i = 0; i < depth; ++i) {
    if (a[i].code_object != b[i].code_object || a[i].instruction_offset != b[i].instruction_offset) return false;
  }
  return true;
}

uint32_t round_up_pow2(uint32_t value) {
  uint32_t out = 1;
  while (out < value) out <<= 1;
  return out;
}

}  // namespace

void CallsiteCapture::set_main_thread(uint64_t pthread_id) noexcept { g_main_thread.store(pthread_id); }

CallsiteCapture::CallsiteCapture(Writer& writer, const Config& config)
    : writer_(writer),
      config_(config),
      depth_(std::min<size_t>(config.callsite_depth, kMaxDepth)),
      serial_(g_capture_serial.fetch_add(1, std::memory_order_relaxed) + 1) {
  uint32_t ledger_capacity = writer_.header().callsite_capacity;
  // Room for every call-site the ledger can hold, plus as many that arrive after it is full
  // (cached with id 0 so they are not described again and again).
  chains_capacity_ = ledger_capacity * 2;
  chains_ = std::make_unique<CodeLocation[]>(size_t{chains_capacity_} * depth_);
  uint32_t slots = round_up_pow2(chains_capacity_ * 2);
  slots_ = std::make_unique<Slot[]>(slots);
  slot_mask_ = slots - 1;
  counters_ = std::make_unique<std::atomic<uint64_t>[]>(chains_capacity_ + 1);
  counter_of_ = std::make_unique<uint32_t[]>(chains_capacity_ + 1);
}

CallsiteCapture::~CallsiteCapture() = default;

bool CallsiteCapture::setup() noexcept {
  std::lock_guard<std::mutex> lock(miss_mutex_);
  int state = ready_.load(std::memory_order_relaxed);
  if (state != 0) return state == 1;
  try {
    return setup_locked();
  } catch (...) {
    ready_.store(2, std::memory_order_release);
    return false;
  }
}

bool CallsiteCapture::setup_locked() {
  static uint64_t last_attempt = 0;
  uint64_t now = now_ns();
  if (last_attempt != 0 && now - last_attempt < kRetryNs) return false;
  last_attempt = now;
  get_this_thread_state_ = reinterpret_cast<GetThisThreadState>(dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState"));
  if (get_this_thread_state_ == nullptr) {
    ready_.store(2, std::memory_order_release);  // not a Python process: capture stays off
    return false;
  }
  is_initialized_ = reinterpret_cast<IsInitialized>(dlsym(RTLD_DEFAULT, "Py_IsInitialized"));
  if (is_initialized_ != nullptr && is_initialized_() == 0) return false;  // too early: try again later

  auto modules = pyframes::read_proc_maps(::getpid());
  if (!modules) {
    warn_once(fmt::format("Python call-sites off: {}", modules.error().message));
    ready_.store(2, std::memory_order_release);
    return false;
  }
  own_memory_ = std::make_unique<pyframes::SelfMemory>(pyframes::SelfMemory::Mode::Table);
  foreign_memory_ = std::make_unique<pyframes::SelfMemory>(pyframes::SelfMemory::Mode::Syscall);
  auto target = pyframes::locate_python(*foreign_memory_, *modules, pyframes::ReadOptions{});
  if (!target) {
    warn_once(fmt::format("Python call-sites off: {}", target.error().message));
    ready_.store(2, std::memory_order_release);
    return false;
  }
  auto layout = pyframes::select_layout(*foreign_memory_, *target);
  if (!layout) {
    warn_once(fmt::format("Python call-sites off: {}", layout.error().message));
    ready_.store(2, std::memory_order_release);
    return false;
  }
  if (!layout->newer_version_note.empty()) warn_once(fmt::format("Python call-sites: {}", layout->newer_version_note));
  target_ = std::move(target.value());
  layout_ = std::move(layout.value());
  writer_.set_text(writer_.header().python_version, sizeof(writer_.header().python_version), target_.version.str());
  ready_.store(1, std::memory_order_release);
  return true;
}

uint64_t CallsiteCapture::main_thread_state() noexcept {
  uint64_t cached = main_tstate_.load(std::memory_order_acquire);
  if (cached != 0) return cached;
  static std::atomic<uint64_t> last_miss{0};
  uint64_t now = now_ns();
  uint64_t missed = last_miss.load(std::memory_order_relaxed);
  if (missed != 0 && now - missed < kRetryNs) return 0;
  uint64_t found = 0;
  if (uint64_t main = g_main_thread.load(); main != 0) {
    found = pyframes::find_thread_state(*foreign_memory_, layout_, target_, main);
  }
  if (found == 0) {
    // The shim was loaded by another thread than Python's main one: take the oldest thread state.
    pyframes::ThreadStateRef states[256];
    size_t n = pyframes::list_thread_states(*foreign_memory_, layout_, target_, states, 256);
    if (n > 0) found = states[n - 1].tstate;
  }
  if (found == 0) {
    last_miss.store(now, std::memory_order_relaxed);
    return 0;
  }
  main_tstate_.store(found, std::memory_order_release);
  return found;
}

size_t CallsiteCapture::collect(uint64_t tstate, const pyframes::SelfMemory& memory, CodeLocation* out,
                                size_t capacity) const noexcept {
  // The caller's own frames in place (Table mode); another thread's through the kernel.
  return pyframes::collect_own_code_locations(memory, layout_, tstate, out, capacity);
}

const CallsiteCapture::Slot* CallsiteCapture::find(uint64_t hash, const CodeLocation* chain, size_t depth) const noexcept {
  for (uint32_t probe = 0, i = static_cast<uint32_t>(hash) & slot_mask_; probe <= slot_mask_;
       ++probe, i = (i + 1) & slot_mask_) {
    const Slot& slot = slots_[i];
    if (slot.state.load(std::memory_order_acquire) == 0) return nullptr;
    if (slot.hash == hash && slot.depth == depth && same_chain(&chains_[size_t{slot.chain} * depth_], chain, depth)) {
      return &slot;
    }
  }
  return nullptr;
}

CallsiteHit CallsiteCapture::capture() noexcept {
  int state = ready_.load(std::memory_order_acquire);
  if (state != 1 && (state == 2 || !setup())) return {};
  uint64_t tstate = reinterpret_cast<uint64_t>(get_this_thread_state_());
  OwnMemos& memos = t_own_memos;
  if (tstate != 0) {
    for (const OwnMemo& memo : memos.memo) {
      if (memo.serial == serial_ && memo.tstate == tstate &&
          pyframes::same_own_frames(*own_memory_, layout_, tstate, memo.frames)) {
        return sighting(memo.id, memo.flags, memo.counter);  // the same frames as at an earlier call
      }
    }
  }
  CodeLocation chain[kMaxDepth + 1];
  uint64_t walk_end = pyframes::kWalkEndedEarly;
  size_t n = tstate != 0 ? pyframes::collect_own_code_locations(*own_memory_, layout_, tstate, chain, depth_, &walk_end)
                         : 0;
  bool borrowed = false;
  if (n == 0 && (is_initialized_ == nullptr || is_initialized_() != 0)) {
    // (After Py_Finalize the main thread's state is gone: nothing to borrow.)
    uint64_t main = main_thread_state();
    if (main != 0 && main != tstate) {
      n = collect(main, *foreign_memory_, chain, depth_);
      tstate = main;
      borrowed = true;
    }
  }
  if (n == 0) return {};
  uint64_t hash = hash_chain(chain, n, borrowed);
  uint32_t id = 0;
  uint32_t flags = 0;
  uint32_t counter = 0;
  if (const Slot* slot = find(hash, chain, n)) {
    id = slot->id;
    flags = slot->flags;
    counter = slot->counter;
  } else if (full_.load(std::memory_order_relaxed)) {
    return {};  // a new chain, but the cache is full: no call-site (and no lock on the hot path)
  } else {
    try {
      std::lock_guard<std::mutex> lock(miss_mutex_);
      if (const Slot* again = find(hash, chain, n)) {
        id = again->id;
        flags = again->flags;
        counter = again->counter;
      } else {
        // Whether the stack goes deeper than what the key holds: asked once, here.
        bool truncated = false;
        if (n == depth_) {
          CodeLocation deeper[kMaxDepth + 1];
          truncated = collect(tstate, borrowed ? *foreign_memory_ : *own_memory_, deeper, depth_ + 1) > depth_;
        }
        id = intern(hash, chain, n, truncated, borrowed, &flags, &counter);
      }
    } catch (...) {
      return {};
    }
  }
  if (!borrowed) {
    OwnMemo& memo = memos.memo[memos.next++ % OwnMemos::kCount];
    memo.serial = 0;
    if (pyframes::record_own_frames(*own_memory_, layout_, tstate, walk_end, &memo.frames)) {
      memo.serial = serial_;
      memo.tstate = tstate;
      memo.id = id;
      memo.flags = flags;
      memo.counter = counter;
    }
  }
  return sighting(id, flags, counter);
}

CallsiteHit CallsiteCapture::sighting(uint32_t id, uint32_t flags, uint32_t counter) noexcept {
  if (id == 0) return {0, 0, flags};
  writer_.hit_callsite(id);  // the ledger keeps each call-site's own count (the report sums them)
  return {id, counters_[counter].fetch_add(1, std::memory_order_relaxed) + 1, flags};
}

void CallsiteCapture::give_back(uint32_t id) noexcept {
  writer_.give_back_callsite_hit(id);
  if (id == 0 || id > chains_capacity_) return;
  counters_[counter_of_[id - 1]].fetch_sub(1, std::memory_order_relaxed);
}

uint32_t CallsiteCapture::intern(uint64_t hash, const CodeLocation* chain, size_t depth, bool truncated, bool borrowed,
                                 uint32_t* flags, uint32_t* counter) {
  *flags = 0;
  *counter = 0;
  if (chains_used_ >= chains_capacity_) {
    full_.store(true, std::memory_order_relaxed);
    return 0;
  }
  const pyframes::Memory& memory = borrowed ? *foreign_memory_ : *own_memory_;
  std::vector<pyframes::Frame> frames;
  frames.reserve(depth);
  for (size_t i = 0; i < depth; ++i) {
    auto frame = pyframes::describe_code_location(memory, layout_, chain[i]);
    if (frame) {
      frames.push_back(std::move(frame.value()));
    } else {
      pyframes::Frame unknown;
      unknown.function = "?";
      unknown.file = "<unreadable>";
      frames.push_back(std::move(unknown));
    }
  }
  std::vector<FrameText> texts;
  std::string user_key = borrowed ? "b|" : "o|";  // the job's own frames: the sighting count's key
  int16_t user_frame = -1;
  for (size_t i = 0; i < frames.size(); ++i) {
    const auto& f = frames[i];
    bool library = false;
    for (const auto& part : config_.library_paths) library = library || f.file.find(part) != std::string::npos;
    if (!library && user_frame < 0) user_frame = static_cast<int16_t>(i);
    if (!library) user_key += fmt::format("{}:{}:{}|", f.file, f.qualname.empty() ? f.function : f.qualname, f.line);
    texts.push_back({f.file, f.qualname.empty() ? std::string_view(f.function) : std::string_view(f.qualname), f.line,
                     library ? uint32_t{kFrameLibrary} : 0u});
  }
  if (!frames.empty() && frames[0].function == "barrier") *flags |= kCallsiteBarrier;
  if (borrowed) *flags |= kCallsiteBorrowed;
  if (truncated) *flags |= kCallsiteTruncated;
  uint32_t id = writer_.add_callsite(texts, user_frame, *flags, now_ns());
  // Counter 0 is shared by the call-sites the ledger had no room for (id 0: never counted).
  if (user_frame < 0) user_key += fmt::format("#{}", chains_used_);  // no frame of the job's: its own count
  auto [key, added] = user_keys_.emplace(std::move(user_key), counters_used_ + 1);
  if (added) ++counters_used_;
  *counter = key->second;
  if (id != 0 && id <= chains_capacity_) counter_of_[id - 1] = *counter;

  uint32_t chain_index = chains_used_++;
  for (size_t i = 0; i < depth; ++i) chains_[size_t{chain_index} * depth_ + i] = chain[i];
  for (uint32_t probe = 0, i = static_cast<uint32_t>(hash) & slot_mask_; probe <= slot_mask_;
       ++probe, i = (i + 1) & slot_mask_) {
    Slot& slot = slots_[i];
    if (slot.state.load(std::memory_order_relaxed) != 0) continue;
    slot.id = id;
    slot.flags = *flags;
    slot.depth = static_cast<uint32_t>(depth);
    slot.hash = hash;
    slot.chain = chain_index;
    slot.counter = *counter;
    slot.state.store(1, std::memory_order_release);
    break;
  }
  if (id != 0) {
    const auto& shown = frames[user_frame >= 0 ? static_cast<size_t>(user_frame) : 0];
    descriptions_.resize(id);
    descriptions_[id - 1] = fmt::format("{}:{} in {}", shown.file, shown.line,
                                        shown.qualname.empty() ? shown.function : shown.qualname);
  }
  return id;
}

std::string CallsiteCapture::describe(uint32_t id) const {
  std::lock_guard<std::mutex> lock(miss_mutex_);
  return id != 0 && id <= descriptions_.size() ? descriptions_[id - 1] : std::string();
}

bool CallsiteCapture::python(pyframes::PythonTarget* target, pyframes::Layout* layout) const {
  if (ready_.load(std::memory_order_acquire) != 1) return false;
  *target = target_;
  *layout = layout_;
  return true;
}

}  // namespace hangshim::shim
