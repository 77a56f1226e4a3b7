#include "ledger/writer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "ledger/writer_lock.h"

namespace hangshim::ledger {

using pyframes::ErrorKind;
using pyframes::make_error;

namespace {

uint32_t round_up_pow2(uint32_t value) {
  uint32_t out = 1;
  while (out < value && out < kMaxRingCapacity) out <<= 1;
  return out;
}

uint64_t align_up(uint64_t value, uint64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

// For file systems without fallocate: real zero bytes in every block. 0 or the errno.
int write_zeros(int fd, uint64_t size) {
  static const char zeros[65536] = {};
  for (uint64_t at = 0; at < size;) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(sizeof zeros, size - at));
    ssize_t wrote = ::pwrite(fd, zeros, n, static_cast<off_t>(at));
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return wrote < 0 ? errno : ENOSPC;
    at += static_cast<uint64_t>(wrote);
  }
  return 0;
}

void copy_text(char* field, size_t capacity, std::string_view text) {
  size_t n = std::min(text.size(), capacity - 1);
  std::memcpy(field, text.data(), n);
  field[n] = '\0';
}

}  // namespace

Layout compute_layout(const Geometry& g) {
  Layout layout{};
  layout.ring_capacity = round_up_pow2(std::clamp<uint32_t>(g.ring_capacity, 16, kMaxRingCapacity));
  layout.callsite_entry_size = static_cast<uint32_t>(callsite_entry_size(std::min(g.callsite_depth, kMaxCallsiteDepth)));
  uint64_t offset = kHeaderSize;
  layout.comm_offset = offset;
  offset = align_up(offset + uint64_t{g.comm_capacity} * sizeof(CommEntry), 64);
  layout.ring_offset = offset;
  offset = align_up(offset + uint64_t{layout.ring_capacity} * sizeof(RingEntry), 64);
  layout.callsite_offset = offset;
  offset = align_up(offset + uint64_t{g.callsite_capacity} * layout.callsite_entry_size, 64);
  layout.strings_offset = offset;
  offset = align_up(offset + g.strings_size, 4096);
  layout.file_size = offset;
  return layout;
}

pyframes::Result<std::unique_ptr<Writer>> Writer::create(const std::string& path, const Geometry& requested,
                                                         const Identity& identity) {
  Geometry g = requested;
  g.comm_capacity = std::clamp<uint32_t>(g.comm_capacity, 1, kMaxCommCapacity);
  g.callsite_capacity = std::clamp<uint32_t>(g.callsite_capacity, 1, kMaxCallsiteCapacity);
  g.callsite_depth = std::clamp<uint32_t>(g.callsite_depth, 1, kMaxCallsiteDepth);
  g.strings_size = std::clamp<uint32_t>(g.strings_size, 4096, kMaxStringsSize);
  Layout layout = compute_layout(g);

  // Made under a temporary name and renamed into place once its header is published, so a
  // reader listing the directory never meets a ledger being created (an empty file, a header
  // without its magic, which reads as damaged); a process killed meanwhile leaves only NAME.new,
  // which no reader lists. A file left by an earlier process with either name (pid reuse) is
  // replaced; O_EXCL and O_NOFOLLOW make sure we never write through a link someone planted,
  // and rename replaces a link at `path` rather than following it.
  const std::string temporary = path + ".new";
  int fd = ::open(temporary.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EEXIST) {
    ::unlink(temporary.c_str());
    fd = ::open(temporary.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  }
  if (fd < 0) {
    int err = errno;
    return make_error(err == EACCES || err == EPERM ? ErrorKind::PermissionDenied : ErrorKind::Io,
                      fmt::format("cannot create ledger {}: {}", path, std::strerror(err)),
                      "set HANGSHIM_DIR to a writable directory");
  }
  // Before the file has a size or its name: a reader that finds a published ledger without the
  // lock knows its writer is gone (writer_lock.h). Without such locks here the ledger is read
  // with every pass, as an earlier writer's.
  const bool locked = take_writer_lock(fd);
  auto fail = [&](const char* what) -> pyframes::Error {
    int err = errno;
    ::close(fd);
    ::unlink(temporary.c_str());
    return make_error(ErrorKind::Io,
                      fmt::format("cannot {} ledger {} ({} bytes): {}", what, path, layout.file_size, std::strerror(err)),
                      err == ENOSPC ? "free space in HANGSHIM_DIR (/dev/shm is often small in containers: --shm-size) or lower HANGSHIM_RING"
                                    : "set HANGSHIM_DIR to a writable directory");
  };
  if (::ftruncate(fd, static_cast<off_t>(layout.file_size)) != 0) return fail("size");
  // Reserve every page now: a store through the mapping to a page the file system cannot
  // back (a full tmpfs or disk) is a SIGBUS, which would kill the job.
  int reserve = ::posix_fallocate(fd, 0, static_cast<off_t>(layout.file_size));
  if (reserve == EOPNOTSUPP || reserve == EINVAL) reserve = write_zeros(fd, layout.file_size);
  if (reserve != 0) {
    errno = reserve;
    return fail("reserve space for");
  }
  void* base = ::mmap(nullptr, layout.file_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return fail("map");

  std::unique_ptr<Writer> w(new Writer());
  w->path_ = path;
  w->fd_ = fd;
  w->base_ = base;
  w->size_ = layout.file_size;
  auto* bytes = static_cast<unsigned char*>(base);
  w->header_ = reinterpret_cast<Header*>(bytes);
  w->comms_ = reinterpret_cast<CommEntry*>(bytes + layout.comm_offset);
  w->comm_capacity_ = g.comm_capacity;
  w->ring_ = reinterpret_cast<RingEntry*>(bytes + layout.ring_offset);
  w->ring_mask_ = layout.ring_capacity - 1;
  w->callsites_ = bytes + layout.callsite_offset;
  w->callsite_capacity_ = g.callsite_capacity;
  w->callsite_depth_ = g.callsite_depth;
  w->callsite_entry_size_ = layout.callsite_entry_size;
  w->strings_ = bytes + layout.strings_offset;
  w->strings_size_ = g.strings_size;

  Header& h = *w->header_;
  h.version = kVersion;
  h.header_size = kHeaderSize;
  h.file_size = layout.file_size;
  h.comm_offset = layout.comm_offset;
  h.comm_capacity = g.comm_capacity;
  h.comm_entry_size = sizeof(CommEntry);
  h.ring_offset = layout.ring_offset;
  h.ring_capacity = layout.ring_capacity;
  h.ring_entry_size = sizeof(RingEntry);
  h.callsite_offset = layout.callsite_offset;
  h.callsite_capacity = g.callsite_capacity;
  h.callsite_entry_size = layout.callsite_entry_size;
  h.callsite_depth = g.callsite_depth;
  h.strings_offset = layout.strings_offset;
  h.strings_size = g.strings_size;
  h.strings_used = 4;  // offset 0 is the empty string
  h.pid = identity.pid;
  h.ppid = identity.ppid;
  h.uid = identity.uid;
  h.rank = identity.rank;
  h.world_size = identity.world_size;
  h.local_rank = identity.local_rank;
  h.start_ns = identity.start_ns;
  h.stall_seconds = identity.stall_seconds;
  copy_text(h.host, sizeof(h.host), identity.host);
  copy_text(h.job, sizeof(h.job), identity.job);
  copy_text(h.command, sizeof(h.command), identity.command);
  copy_text(h.shim_version, sizeof(h.shim_version), identity.shim_version);
  h.parent_start = identity.parent_start;
  copy_text(h.slurm_job, sizeof(h.slurm_job), identity.slurm_job);
  copy_text(h.run_id, sizeof(h.run_id), identity.run_id);
  copy_text(h.master, sizeof(h.master), identity.master);
  copy_text(h.launcher, sizeof(h.launcher), identity.launcher);
  h.state = static_cast<uint32_t>(ProcessState::Running);
  h.features = locked ? uint32_t{kFeatureWriterLock} : 0u;
  // Publish: a reader that sees the magic sees everything above.
  uint64_t magic;
  std::memcpy(&magic, kMagic, sizeof(magic));
  store_release(*reinterpret_cast<uint64_t*>(h.magic), magic);
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temporary.c_str());
    return make_error(ErrorKind::Io, fmt::format("cannot name ledger {}: {}", path, std::strerror(err)),
                      "set HANGSHIM_DIR to a writable directory");  // w unmaps and closes it
  }
  return w;
}

Writer::~Writer() {
  if (base_ != nullptr) ::munmap(base_, size_);
  if (fd_ >= 0) ::close(fd_);
}

void Writer::abandon() noexcept {
  if (base_ != nullptr) ::munmap(base_, size_);
  if (fd_ >= 0) ::close(fd_);
  base_ = nullptr;
  fd_ = -1;
}

uint32_t Writer::add_comm(const CommInit& init) noexcept {
  uint32_t slot = fetch_add_relaxed(header_->comm_count, uint32_t{1});
  if (slot >= comm_capacity_) {
    fetch_add_relaxed(header_->comm_count, uint32_t(-1));
    fetch_add_relaxed(header_->dropped_comms, uint32_t{1});
    return 0;
  }
  CommEntry& c = comms_[slot];
  store_relaxed(c.key_kind, static_cast<uint32_t>(init.key_kind));
  store_relaxed(c.key, init.key);
  store_relaxed(c.parent_key, init.parent_key);
  store_relaxed(c.handle, init.handle);
  store_relaxed(c.rank, init.rank);
  store_relaxed(c.nranks, init.nranks);
  store_relaxed(c.device, init.device);
  store_relaxed(c.color, init.color);
  store_relaxed(c.split_index, init.split_index);
  store_relaxed(c.created_ns, init.created_ns);
  size_t n = std::min(init.name.size(), sizeof(c.name) - 1);
  for (size_t i = 0; i < n; ++i) store_relaxed(c.name[i], init.name[i]);
  store_release(c.state, static_cast<uint32_t>(init.state));
  return slot + 1;
}

StringRef Writer::intern(std::string_view text) {
  if (text.empty()) return 0;
  if (text.size() > 4096) text = text.substr(text.size() - 4096);  // keep the end of a long path
  auto found = interned_.find(std::string(text));
  if (found != interned_.end()) return found->second;
  uint32_t used = load_relaxed(header_->strings_used);
  uint64_t need = 2 + text.size() + 1;
  if (used + need > strings_size_) return UINT32_MAX;
  uint16_t length = static_cast<uint16_t>(text.size());
  std::memcpy(strings_ + used, &length, 2);
  std::memcpy(strings_ + used + 2, text.data(), text.size());
  strings_[used + 2 + text.size()] = '\0';
  store_release(header_->strings_used, static_cast<uint32_t>(used + need));
  interned_.emplace(std::string(text), used);
  return used;
}

uint32_t Writer::add_callsite(std::span<const FrameText> frames, int16_t user_frame, uint32_t flags,
                              uint64_t now_ns) {
  uint32_t slot = load_relaxed(header_->callsite_count);
  if (slot >= callsite_capacity_) {
    fetch_add_relaxed(header_->dropped_callsites, uint32_t{1});
    return 0;
  }
  size_t depth = std::min<size_t>(frames.size(), callsite_depth_);
  auto* entry = reinterpret_cast<CallsiteEntry*>(callsites_ + slot * callsite_entry_size_);
  auto* out = reinterpret_cast<CallsiteFrame*>(entry + 1);
  for (size_t i = 0; i < depth; ++i) {
    StringRef file = intern(frames[i].file);
    StringRef function = intern(frames[i].function);
    if (file == UINT32_MAX || function == UINT32_MAX) {
      fetch_add_relaxed(header_->dropped_callsites, uint32_t{1});
      return 0;
    }
    out[i] = CallsiteFrame{file, function, frames[i].line, frames[i].flags};
  }
  entry->id = slot + 1;
  entry->depth = static_cast<uint16_t>(depth);
  entry->user_frame = user_frame < static_cast<int16_t>(depth) ? user_frame : int16_t{-1};
  entry->flags = flags | (frames.size() > depth ? uint32_t{kCallsiteTruncated} : uint32_t{0});
  entry->first_ns = now_ns;
  store_relaxed(entry->hits, uint64_t{0});
  store_release(entry->state, uint32_t{1});
  store_release(header_->callsite_count, slot + 1);
  return slot + 1;
}

bool Writer::set_first_error(uint64_t record, int32_t result, Op op, const char* text, uint32_t record_flags) noexcept {
  Header& h = *header_;
  uint32_t expected = static_cast<uint32_t>(ErrorState::None);
  if (!__atomic_compare_exchange_n(&h.error_state, &expected, static_cast<uint32_t>(ErrorState::Writing), false,
                                   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
    return false;
  }
  store_relaxed(h.error_op, static_cast<uint32_t>(op));
  store_relaxed(h.error_record, record);
  store_relaxed(h.error_result, result);
  store_relaxed(h.error_flags, record_flags);
  size_t n = text != nullptr ? strnlen(text, kErrorTextMax) : 0;
  for (size_t i = 0; i < n; ++i) store_relaxed(h.error_text[i], text[i]);
  store_relaxed(h.error_text[n], '\0');
  store_release(h.error_state, static_cast<uint32_t>(ErrorState::Published));
  return true;
}

void Writer::set_text(char* field, size_t capacity, std::string_view text) noexcept {
  size_t n = std::min(text.size(), capacity - 1);
  for (size_t i = 0; i < n; ++i) store_relaxed(field[i], text[i]);
  store_relaxed(field[n], '\0');
}

}  // namespace hangshim::ledger
