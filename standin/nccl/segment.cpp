#include "segment.h"

#include "errors.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string_view>

namespace fakenccl {
namespace {

// HANGSHIM_FAKE_CHUNK_BYTES (test use): staging size per rank and per channel. Only the creator
// reads it; everyone else uses the value in the header, so ranks always agree.
bool chunk_bytes_from_env(std::uint64_t& coll, std::uint64_t& p2p) {
  coll = kDefaultCollChunkBytes;
  p2p = kDefaultP2pChunkBytes;
  const char* raw = std::getenv("HANGSHIM_FAKE_CHUNK_BYTES");
  if (raw == nullptr || *raw == '\0') return true;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(raw, &end, 10);
  if (errno != 0 || end == raw || *end != '\0' || v < kMinChunkBytes || v > (1ULL << 30)) return false;
  coll = p2p = align_up(v, 8);
  return true;
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

ncclResult_t Segment::join(const std::string& name, int nranks, int rank, const Deadline& deadline,
                           const std::atomic<bool>* abort) {
  name_ = name;
  for (int attempt = 0;; ++attempt) {
    const int created = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (created >= 0) {
      Fd fd(created);
      if (ncclResult_t r = create(fd.get(), nranks); r != ncclSuccess) {
        shm_unlink(name.c_str());
        return r;
      }
      break;
    }
    if (errno != EEXIST) {
      return fail(ncclSystemError, "fakenccl: shm_open({}) failed: {} (is /dev/shm mounted and writable?)",
                  name, std::strerror(errno));
    }
    const int existing = shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
    if (existing < 0) {
      if (errno == ENOENT) continue;  // removed between our two calls: try to create again
      return fail(ncclSystemError, "fakenccl: shm_open({}) failed: {}", name, std::strerror(errno));
    }
    Fd fd(existing);
    if (ncclResult_t r = map_existing(fd.get(), nranks, deadline, abort); r != ncclSuccess) return r;
    break;
  }

  RankSlot& mine = slot(rank);
  std::uint32_t expected = 0;
  if (!std::atomic_ref<std::uint32_t>(mine.joined).compare_exchange_strong(expected, 1)) {
    const int other = load_acquire(mine.pid);
    release();
    return fail(ncclInvalidUsage,
                "fakenccl: rank {} of this communicator already joined (pid {}); every process must "
                "pass a different rank to ncclCommInitRank",
                rank, other);
  }
  store_release(mine.pid, static_cast<std::int32_t>(getpid()));
  const std::uint32_t now_joined =
      std::atomic_ref<std::uint32_t>(header().joined).fetch_add(1, std::memory_order_acq_rel) + 1;
  counted_join_ = true;
  // The last rank to arrive removes the name: the memory lives on while mapped and nothing is
  // left in /dev/shm when the processes end, however they end.
  if (now_joined == header().nranks) shm_unlink(name_.c_str());
  wake_all();
  return ncclSuccess;
}

ncclResult_t Segment::create(int fd, int nranks) {
  std::uint64_t coll = 0;
  std::uint64_t p2p = 0;
  if (!chunk_bytes_from_env(coll, p2p)) {
    return fail(ncclInvalidArgument,
                "fakenccl: HANGSHIM_FAKE_CHUNK_BYTES={} is not a byte count between {} and 2^30",
                std::getenv("HANGSHIM_FAKE_CHUNK_BYTES"), kMinChunkBytes);
  }
  geometry_ = segment_geometry(static_cast<std::uint32_t>(nranks), coll, p2p);
  if (ftruncate(fd, static_cast<off_t>(geometry_.total)) != 0) {
    return fail(ncclSystemError, "fakenccl: sizing shared memory {} to {} bytes failed: {}", name_,
                geometry_.total, std::strerror(errno));
  }
  void* p = mmap(nullptr, geometry_.total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    return fail(ncclSystemError, "fakenccl: mmap of {} failed: {}", name_, std::strerror(errno));
  }
  base_ = static_cast<std::byte*>(p);
  size_ = geometry_.total;
  SegmentHeader& h = header();  // ftruncate zero-filled everything else
  h.magic = kSegmentMagic;
  h.version = kLayoutVersion;
  h.nranks = static_cast<std::uint32_t>(nranks);
  h.coll_chunk_bytes = coll;
  h.p2p_chunk_bytes = p2p;
  h.total_bytes = geometry_.total;
  h.creator_pid = static_cast<std::int32_t>(getpid());
  store_release(h.ready, kSegmentReady);
  return ncclSuccess;
}

ncclResult_t Segment::map_existing(int fd, int nranks, const Deadline& deadline,
                                   const std::atomic<bool>* abort) {
  // The creator may not have sized or filled the segment yet: wait for its ready mark.
  const SegmentHeader* h = nullptr;
  void* head = MAP_FAILED;
  for (int attempt = 0;; ++attempt) {
    struct stat st {};
    if (fstat(fd, &st) == 0 && static_cast<std::uint64_t>(st.st_size) >= sizeof(SegmentHeader)) {
      if (head == MAP_FAILED) head = mmap(nullptr, sizeof(SegmentHeader), PROT_READ, MAP_SHARED, fd, 0);
      if (head == MAP_FAILED) {
        return fail(ncclSystemError, "fakenccl: mmap of {} failed: {}", name_, std::strerror(errno));
      }
      h = static_cast<const SegmentHeader*>(head);
      if (load_acquire(const_cast<SegmentHeader*>(h)->ready) == kSegmentReady) break;
    }
    if (deadline.expired() || (abort != nullptr && abort->load())) {
      if (head != MAP_FAILED) munmap(head, sizeof(SegmentHeader));
      return fail(ncclSystemError, "fakenccl: communicator {} was never set up by its first rank ({})",
                  name_, timeout_setting_text());
    }
    backoff_sleep(attempt);
  }
  const SegmentHeader copy = *h;
  munmap(head, sizeof(SegmentHeader));
  if (copy.magic != kSegmentMagic || copy.version != kLayoutVersion) {
    return fail(ncclInternalError, "fakenccl: {} is not a segment of this stand-in's layout", name_);
  }
  if (copy.nranks != static_cast<std::uint32_t>(nranks)) {
    return fail(ncclInvalidUsage,
                "fakenccl: communicator {} was created with nranks={} but this rank passed nranks={} "
                "(all ranks must pass the same nranks)",
                name_, copy.nranks, nranks);
  }
  geometry_ = segment_geometry(copy.nranks, copy.coll_chunk_bytes, copy.p2p_chunk_bytes);
  void* p = mmap(nullptr, copy.total_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    return fail(ncclSystemError, "fakenccl: mmap of {} failed: {}", name_, std::strerror(errno));
  }
  base_ = static_cast<std::byte*>(p);
  size_ = copy.total_bytes;
  return ncclSuccess;
}

void Segment::release() {
  if (base_ == nullptr) return;
  const bool complete = all_joined();
  munmap(base_, size_);
  base_ = nullptr;
  size_ = 0;
  if (!complete && counted_join_) shm_unlink(name_.c_str());
  counted_join_ = false;
}

}  // namespace fakenccl

namespace fakenccl {
namespace {

bool process_alive(std::int32_t pid) { return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM); }

// Whether segment `name` (already open as `fd`) has no live process: neither its creator nor any
// rank that joined. A segment still being set up (not ready) counts as alive for a minute.
bool segment_is_stale(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return false;
  if (static_cast<std::uint64_t>(st.st_size) < sizeof(SegmentHeader)) {
    return std::time(nullptr) - st.st_mtime > 60;
  }
  void* head = mmap(nullptr, sizeof(SegmentHeader), PROT_READ, MAP_SHARED, fd, 0);
  if (head == MAP_FAILED) return false;
  auto* h = static_cast<SegmentHeader*>(head);
  bool stale = false;
  if (load_acquire(h->ready) != kSegmentReady || h->magic != kSegmentMagic || h->nranks == 0 ||
      h->nranks > static_cast<std::uint32_t>(kMaxRanks)) {
    stale = std::time(nullptr) - st.st_mtime > 60;
  } else if (!process_alive(h->creator_pid)) {
    const SegmentGeometry g = segment_geometry(h->nranks, h->coll_chunk_bytes, h->p2p_chunk_bytes);
    void* all = mmap(nullptr, g.staging, PROT_READ, MAP_SHARED, fd, 0);
    if (all != MAP_FAILED && static_cast<std::uint64_t>(st.st_size) >= g.staging) {
      auto* slots = reinterpret_cast<RankSlot*>(static_cast<std::byte*>(all) + g.slots);
      stale = true;
      for (std::uint32_t r = 0; r < h->nranks; ++r) {
        if (load_acquire(slots[r].joined) != 0 && process_alive(load_acquire(slots[r].pid))) stale = false;
      }
    }
    if (all != MAP_FAILED) munmap(all, g.staging);
  }
  munmap(head, sizeof(SegmentHeader));
  return stale;
}

}  // namespace

void remove_stale_segments() {
  DIR* dir = opendir("/dev/shm");
  if (dir == nullptr) return;
  constexpr std::string_view kPrefix = "hangshim-fakenccl.";
  while (const dirent* entry = readdir(dir)) {
    const std::string_view file = entry->d_name;
    if (file.substr(0, kPrefix.size()) != kPrefix) continue;
    // Appended, not "/" + std::string(file): GCC 12's -Wrestrict misfires on that (an error
    // with HANGSHIM_WERROR).
    std::string name = "/";
    name += file;
    const int fd = shm_open(name.c_str(), O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) continue;
    const bool stale = segment_is_stale(fd);
    close(fd);
    if (stale) shm_unlink(name.c_str());
  }
  closedir(dir);
}

}  // namespace fakenccl
