#include "ledger/reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "ledger/access.h"
#include "ledger/snapshot.h"
#include "ledger/trust.h"
#include "pyframes/utf8.h"

namespace hangshim::ledger {

using pyframes::ErrorKind;
using pyframes::make_error;

namespace {

// A mapping ends at a page boundary: at most one page (64 KiB on some arm64 kernels) past the
// ledger's end is the mapping's tail in a memory image.
constexpr uint64_t kMaxMappingTail = 64 * 1024;

// Text from the file is whatever bytes its writer (or whoever damaged it) put there: every
// string the reader hands out is one printable line of valid UTF-8, so no report, warning or
// JSON document built from it can carry terminal escapes or invalid bytes.
std::string text_from_file(std::string_view bytes) { return pyframes::render::printable_line(bytes); }

// Every load from the file is atomic: the writer may be changing it right now.
template <size_t N>
std::string load_text(const char (&field)[N]) {
  std::string out;
  for (size_t i = 0; i < N; ++i) {
    char c = load_relaxed(field[i]);
    if (c == '\0') break;
    out.push_back(c);
  }
  return text_from_file(out);
}

struct Section {
  const char* name;
  uint64_t offset;
  uint64_t size;
};

class Parser {
 public:
  // `snapshot`: the bytes are a private copy made by snapshot_ledger, whose ring slots are each
  // stable or marked odd; they are read as plain memory, without the seqlock a live mapping needs.
  // `records`: memory for the records (emptied first; its capacity is what is reused).
  Parser(const unsigned char* base, size_t size, const std::string& source, LedgerBytes kind, bool snapshot = false,
         std::vector<CallRecord>* records = nullptr)
      : base_(base), size_(size), kind_(kind), snapshot_(snapshot) {
    out_.source = source;
    if (records != nullptr) {
      out_.records = std::move(*records);
      out_.records.clear();
    }
  }

  pyframes::Result<Ledger> parse() {
    if (size_ < kHeaderSize) {
      if (size_ < 7 || std::memcmp(base_, kMagic, 7) != 0) {
        return make_error(ErrorKind::Corrupt, fmt::format("{}: not a hangshim ledger ({} bytes)", out_.source, size_),
                          "pass a file from HANGSHIM_DIR (default /dev/shm/hangshim-$UID)");
      }
      return make_error(ErrorKind::Truncated,
                        fmt::format("{}: {} bytes, shorter than a ledger header ({} bytes)", out_.source, size_, kHeaderSize),
                        "the file was cut while being copied; copy it again");
    }
    header_ = reinterpret_cast<const Header*>(base_);
    uint64_t magic = load_acquire(*reinterpret_cast<const uint64_t*>(header_->magic));
    uint64_t expected;
    std::memcpy(&expected, kMagic, sizeof(expected));
    if (magic == 0) {
      return make_error(ErrorKind::Corrupt, fmt::format("{}: the ledger header was never completed", out_.source),
                        "a ledger caught while being created (its writer publishes the header last), or a "
                        "damaged file; nothing was recorded in it");
    }
    if (std::memcmp(&magic, kMagic, 7) != 0) {
      return make_error(ErrorKind::Corrupt, fmt::format("{}: not a hangshim ledger (bad magic)", out_.source),
                        "pass a file from HANGSHIM_DIR (default /dev/shm/hangshim-$UID)");
    }
    uint32_t version = load_relaxed(header_->version);
    if (magic != expected || version != kVersion) {
      return make_error(ErrorKind::UnsupportedVersion,
                        fmt::format("{}: ledger format version {}; this hangshim reads version {}", out_.source,
                                    version, kVersion),
                        "read it with the hangshim release that wrote it");
    }
    PYFRAMES_CHECK(check_geometry());
    read_header();
    read_comms();
    read_callsites();
    read_ring();
    return std::move(out_);
  }

 private:
  pyframes::Result<void> corrupt(const std::string& what) {
    return make_error(ErrorKind::Corrupt, fmt::format("{}: corrupt ledger header: {}", out_.source, what),
                      "the file is damaged; nothing in it can be trusted");
  }

  pyframes::Result<void> check_geometry() {
    const Header& h = *header_;
    uint64_t file_size = load_relaxed(h.file_size);
    if (load_relaxed(h.header_size) != kHeaderSize) return corrupt("header size");
    if (file_size > size_) {
      return make_error(ErrorKind::Truncated,
                        fmt::format("{}: {} bytes, but the ledger says it has {}", out_.source, size_, file_size),
                        "the file was cut while being copied; copy it again");
    }
    if (file_size < size_ && kind_ == LedgerBytes::MappingImage && size_ - file_size < kMaxMappingTail) {
      size_ = file_size;  // the rest of the mapping's last page
    }
    if (file_size < size_) return corrupt(fmt::format("file size {} but {} bytes present", file_size, size_));
    comm_capacity_ = load_relaxed(h.comm_capacity);
    ring_capacity_ = load_relaxed(h.ring_capacity);
    callsite_capacity_ = load_relaxed(h.callsite_capacity);
    callsite_depth_ = load_relaxed(h.callsite_depth);
    callsite_entry_size_ = load_relaxed(h.callsite_entry_size);
    strings_size_ = load_relaxed(h.strings_size);
    if (comm_capacity_ == 0 || comm_capacity_ > kMaxCommCapacity) return corrupt("communicator capacity");
    if (ring_capacity_ == 0 || ring_capacity_ > kMaxRingCapacity || (ring_capacity_ & (ring_capacity_ - 1)) != 0) {
      return corrupt("ring capacity");
    }
    if (callsite_capacity_ == 0 || callsite_capacity_ > kMaxCallsiteCapacity) return corrupt("call-site capacity");
    if (callsite_depth_ == 0 || callsite_depth_ > kMaxCallsiteDepth) return corrupt("call-site depth");
    if (load_relaxed(h.comm_entry_size) != sizeof(CommEntry)) return corrupt("communicator entry size");
    if (load_relaxed(h.ring_entry_size) != sizeof(RingEntry)) return corrupt("ring entry size");
    if (callsite_entry_size_ != callsite_entry_size(callsite_depth_)) return corrupt("call-site entry size");
    if (strings_size_ < 4 || strings_size_ > kMaxStringsSize) return corrupt("string pool size");
    Section sections[] = {
        {"communicators", load_relaxed(h.comm_offset), uint64_t{comm_capacity_} * sizeof(CommEntry)},
        {"ring", load_relaxed(h.ring_offset), uint64_t{ring_capacity_} * sizeof(RingEntry)},
        {"call-sites", load_relaxed(h.callsite_offset), uint64_t{callsite_capacity_} * callsite_entry_size_},
        {"strings", load_relaxed(h.strings_offset), strings_size_},
    };
    for (const auto& s : sections) {
      if (s.offset < kHeaderSize || s.offset % 8 != 0 || s.offset > file_size || s.size > file_size - s.offset) {
        return corrupt(fmt::format("{} section outside the file", s.name));
      }
    }
    std::sort(std::begin(sections), std::end(sections), [](const Section& a, const Section& b) { return a.offset < b.offset; });
    for (size_t i = 1; i < std::size(sections); ++i) {
      if (sections[i - 1].offset + sections[i - 1].size > sections[i].offset) {
        return corrupt(fmt::format("{} and {} sections overlap", sections[i - 1].name, sections[i].name));
      }
    }
    comms_ = reinterpret_cast<const CommEntry*>(base_ + load_relaxed(h.comm_offset));
    ring_ = reinterpret_cast<const RingEntry*>(base_ + load_relaxed(h.ring_offset));
    callsites_ = base_ + load_relaxed(h.callsite_offset);
    strings_ = base_ + load_relaxed(h.strings_offset);
    return {};
  }

  void read_header() {
    const Header& h = *header_;
    LedgerHeader& o = out_.header;
    o.version = load_relaxed(h.version);
    o.file_size = load_relaxed(h.file_size);
    o.pid = load_relaxed(h.pid);
    o.ppid = load_relaxed(h.ppid);
    o.uid = load_relaxed(h.uid);
    o.rank = load_relaxed(h.rank);
    o.world_size = load_relaxed(h.world_size);
    o.local_rank = load_relaxed(h.local_rank);
    o.start_ns = load_relaxed(h.start_ns);
    o.nccl_version = load_relaxed(h.nccl_version);
    o.features = load_relaxed(h.features);
    o.stall_seconds = load_relaxed(h.stall_seconds);
    o.host = load_text(h.host);
    o.job = load_text(h.job);
    o.command = load_text(h.command);
    o.python_version = load_text(h.python_version);
    o.shim_version = load_text(h.shim_version);
    o.parent_start = load_relaxed(h.parent_start);
    o.slurm_job = load_text(h.slurm_job);
    o.run_id = load_text(h.run_id);
    o.master = load_text(h.master);
    o.launcher = load_text(h.launcher);
    o.state = load_acquire(h.state);
    o.stall_count = load_relaxed(h.stall_count);
    o.heartbeat_ns = load_relaxed(h.heartbeat_ns);
    o.ring_head = load_acquire(h.ring_head);
    o.ring_capacity = ring_capacity_;
    o.comm_capacity = comm_capacity_;
    o.callsite_capacity = callsite_capacity_;
    o.callsite_depth = callsite_depth_;
    o.dropped_comms = load_relaxed(h.dropped_comms);
    o.dropped_callsites = load_relaxed(h.dropped_callsites);
    o.stall_record = load_relaxed(h.stall_record);
    o.stall_ns = load_relaxed(h.stall_ns);
    o.stall_limit_ms = load_relaxed(h.stall_limit_ms);
    o.exit_ns = load_relaxed(h.exit_ns);
    o.group_count = load_relaxed(h.group_count);
    o.stacks_file = load_text(h.stacks_file);
    // A stacks file name is a plain name in the ledger's directory, never a path.
    if (o.stacks_file.find('/') != std::string::npos || o.stacks_file == "." || o.stacks_file == "..") {
      out_.warnings.push_back(fmt::format("ignored a stacks file name with a path in it: {}", o.stacks_file));
      o.stacks_file.clear();
    }
    read_first_error();
  }

  void read_first_error() {
    const Header& h = *header_;
    uint32_t state = load_acquire(h.error_state);
    if (state == static_cast<uint32_t>(ErrorState::None) || state == static_cast<uint32_t>(ErrorState::Writing)) return;
    FirstError& e = out_.header.first_error;
    uint32_t op = load_relaxed(h.error_op);
    uint64_t record = load_relaxed(h.error_record);
    int32_t result = load_relaxed(h.error_result);
    if (state != static_cast<uint32_t>(ErrorState::Published) || op >= static_cast<uint32_t>(kOpCount) ||
        record > load_acquire(h.ring_head) || !is_plausible_result(result)) {
      out_.warnings.push_back("the first-error area is corrupt; ignored");
      return;
    }
    e.present = true;
    e.op = static_cast<uint8_t>(op);
    e.record = record;
    e.result = result;
    e.flags = load_relaxed(h.error_flags);
    e.text = load_text(h.error_text);
  }

  void read_comms() {
    uint32_t count = std::min(load_acquire(header_->comm_count), comm_capacity_);
    for (uint32_t slot = 0; slot < count; ++slot) {
      const CommEntry& c = comms_[slot];
      uint32_t state = load_acquire(c.state);
      if (state == static_cast<uint32_t>(CommState::Empty)) continue;  // claimed, not yet published
      CommInfo info;
      info.id = slot + 1;
      info.state = state;
      info.key_kind = load_relaxed(c.key_kind);
      info.key = load_relaxed(c.key);
      info.parent_key = load_relaxed(c.parent_key);
      info.handle = load_relaxed(c.handle);
      info.rank = load_relaxed(c.rank);
      info.nranks = load_relaxed(c.nranks);
      info.device = load_relaxed(c.device);
      info.color = load_relaxed(c.color);
      info.split_index = load_relaxed(c.split_index);
      info.splits = load_relaxed(c.splits);
      info.created_ns = load_relaxed(c.created_ns);
      info.ended_ns = load_relaxed(c.ended_ns);
      info.coll_issued = load_relaxed(c.coll_issued);
      info.coll_completed = load_relaxed(c.coll_completed);
      info.p2p_issued = load_relaxed(c.p2p_issued);
      info.p2p_completed = load_relaxed(c.p2p_completed);
      for (int i = 0; i < kCountedOps; ++i) info.op_counts[static_cast<size_t>(i)] = load_relaxed(c.op_counts[i]);
      info.name = load_text(c.name);
      info.async_error = load_relaxed(c.async_error);
      info.revoked_ns = load_relaxed(c.revoked_ns);
      if (state > static_cast<uint32_t>(CommState::Aborted) || info.key_kind > static_cast<uint32_t>(KeyKind::Unknown) ||
          info.nranks < 0 || info.nranks > kMaxRanks || info.rank < -1 || (info.nranks > 0 && info.rank >= info.nranks)) {
        out_.warnings.push_back(fmt::format("communicator entry {} is corrupt; skipped", slot + 1));
        continue;
      }
      out_.comms.push_back(std::move(info));
    }
  }

  std::string read_string(StringRef ref, bool& ok) {
    if (ref == 0) return {};
    if (ref < 4 || uint64_t{ref} + 3 > strings_used_) {
      ok = false;
      return {};
    }
    uint16_t length;
    std::memcpy(&length, strings_ + ref, sizeof(length));
    uint64_t end = uint64_t{ref} + 2 + length;
    if (end + 1 > strings_used_ || strings_[end] != '\0') {
      ok = false;
      return {};
    }
    return text_from_file(std::string_view(reinterpret_cast<const char*>(strings_ + ref + 2), length));
  }

  void read_callsites() {
    uint32_t count = std::min(load_acquire(header_->callsite_count), callsite_capacity_);
    strings_used_ = std::min(load_acquire(header_->strings_used), strings_size_);
    for (uint32_t slot = 0; slot < count; ++slot) {
      const auto* entry = reinterpret_cast<const CallsiteEntry*>(callsites_ + uint64_t{slot} * callsite_entry_size_);
      if (load_acquire(entry->state) != 1) continue;
      CallsiteInfo info;
      info.id = load_relaxed(entry->id);
      info.flags = load_relaxed(entry->flags);
      info.user_frame = load_relaxed(entry->user_frame);
      info.hits = load_relaxed(entry->hits);
      info.first_ns = load_relaxed(entry->first_ns);
      uint16_t depth = load_relaxed(entry->depth);
      if (info.id != slot + 1 || depth > callsite_depth_ || info.user_frame < -1 || info.user_frame >= depth) {
        out_.warnings.push_back(fmt::format("call-site entry {} is corrupt; skipped", slot + 1));
        continue;
      }
      const auto* frames = reinterpret_cast<const CallsiteFrame*>(entry + 1);
      bool ok = true;
      for (uint16_t i = 0; i < depth; ++i) {
        FrameInfo frame;
        frame.file = read_string(load_relaxed(frames[i].file), ok);
        frame.function = read_string(load_relaxed(frames[i].function), ok);
        frame.line = load_relaxed(frames[i].line);
        frame.library = (load_relaxed(frames[i].flags) & kFrameLibrary) != 0;
        info.frames.push_back(std::move(frame));
      }
      if (!ok) {
        out_.warnings.push_back(fmt::format("call-site {} names a string outside the pool; skipped", slot + 1));
        continue;
      }
      out_.callsites.push_back(std::move(info));
    }
  }

  void read_ring() {
    uint64_t head = out_.header.ring_head;
    uint64_t n = std::min<uint64_t>(head, ring_capacity_);
    uint64_t busy = 0;
    uint64_t overwritten = 0;
    uint64_t invalid = 0;
    out_.records.reserve(static_cast<size_t>(n));  // n <= ring capacity, which check_geometry bounded
    // Counted by slots, never compared against `head`: a damaged head near 2^64 would make
    // `index <= head` hold for every index, wrapping forever.
    for (uint64_t k = 0; k < n; ++k) {
      uint64_t index = head - n + 1 + k;
      const RingEntry& slot = ring_[(index - 1) & (ring_capacity_ - 1)];
      // A live mapping's slot is read torn-free into `live`. Nothing writes a private copy: its
      // slot is looked at in place, with the stamp the snapshot checked, and copied once, into
      // the records (a local copy first was a third of the parse over a directory of ledgers).
      RingEntry live;
      const RingEntry* found = &slot;
      if (snapshot_) {
        if ((slot.stamp & 1) != 0) {
          ++busy;
          continue;
        }
      } else if (read_ring_entry(slot, live, 200)) {
        found = &live;
      } else {
        ++busy;
        continue;
      }
      const RingEntry& entry = *found;
      if (entry.index != index) {
        // Larger: the writer wrapped past it while we read. 0, or an earlier record of this
        // slot (index - k * capacity): claimed by a writer (the head moved) that has not taken
        // the slot's stamp yet, so the slot still holds what was there; k > 1 when the writers
        // of several laps were preempted between claiming and writing (seen with 6 threads on
        // 2 cores). Anything else is damage.
        bool previous_of_this_slot = entry.index < index && ((index - entry.index) & (ring_capacity_ - 1)) == 0;
        if (entry.index > index) {
          ++overwritten;
        } else if (entry.index == 0 || previous_of_this_slot) {
          ++busy;
        } else {
          ++invalid;
        }
        continue;
      }
      if (entry.op == 0 || entry.op >= kOpCount || entry.comm > comm_capacity_ || entry.callsite > callsite_capacity_ ||
          !is_plausible_result(entry.result)) {
        ++invalid;
        continue;
      }
      CallRecord& kept = out_.records.emplace_back(entry);
      kept.reserved0 = 0;
      kept.reserved1 = 0;
    }
    if (busy > 0) out_.warnings.push_back(fmt::format("{} record(s) were being written and were skipped", busy));
    if (overwritten > 0) out_.warnings.push_back(fmt::format("{} record(s) were replaced while being read", overwritten));
    if (invalid > 0) out_.warnings.push_back(fmt::format("{} record(s) are corrupt and were skipped", invalid));
  }

  const unsigned char* base_;
  size_t size_;
  LedgerBytes kind_;
  bool snapshot_ = false;
  Ledger out_;
  const Header* header_ = nullptr;
  const CommEntry* comms_ = nullptr;
  const RingEntry* ring_ = nullptr;
  const unsigned char* callsites_ = nullptr;
  const unsigned char* strings_ = nullptr;
  uint32_t comm_capacity_ = 0;
  uint32_t ring_capacity_ = 0;
  uint32_t callsite_capacity_ = 0;
  uint32_t callsite_depth_ = 0;
  uint32_t callsite_entry_size_ = 0;
  uint32_t strings_size_ = 0;
  uint32_t strings_used_ = 0;
};

}  // namespace

const CommInfo* Ledger::comm(uint32_t id) const {
  for (const auto& c : comms) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

const CallsiteInfo* Ledger::callsite(uint32_t id) const {
  for (const auto& c : callsites) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

std::vector<const CallRecord*> Ledger::pending() const {
  std::vector<const CallRecord*> out;
  for (const auto& r : records) {
    if (r.completed_ns == 0) out.push_back(&r);
  }
  return out;
}

const FrameInfo* your_line(const CallsiteInfo& callsite) {
  if (callsite.frames.empty()) return nullptr;
  if (callsite.user_frame >= 0 && static_cast<size_t>(callsite.user_frame) < callsite.frames.size()) {
    return &callsite.frames[static_cast<size_t>(callsite.user_frame)];
  }
  return &callsite.frames.front();
}

const char* display_op(const CallRecord& record) {
  return (record.flags & kRecordBarrier) != 0 ? "barrier" : op_name(record.op);
}

pyframes::Result<Ledger> parse_ledger(const void* data, size_t size, const std::string& source, LedgerBytes kind) {
  return Parser(static_cast<const unsigned char*>(data), size, source, kind).parse();
}

pyframes::Result<Ledger> parse_ledger_copy(const void* data, size_t size, const std::string& source,
                                           std::vector<CallRecord>* records) {
  return Parser(static_cast<const unsigned char*>(data), size, source, LedgerBytes::File, /*snapshot=*/true, records).parse();
}

namespace {

std::string directory_of(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

LedgerReader::LedgerReader() : euid_(static_cast<uint32_t>(::geteuid())) {}

LedgerReader::~LedgerReader() {
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

pyframes::Result<Ledger> LedgerReader::read(const std::string& path, LedgerBytes bytes_kind) {
  return read_copy(path, bytes_kind, nullptr);
}

pyframes::Result<Ledger> LedgerReader::read(const std::string& path, std::vector<unsigned char>& copy) {
  return read_copy(path, LedgerBytes::File, &copy);
}

pyframes::Result<Ledger> LedgerReader::read_copy(const std::string& path, LedgerBytes bytes_kind,
                                                 std::vector<unsigned char>* copy) {
  // The directory first (its owner and mode decide whether the file can be trusted), then the
  // file inside it: O_NOFOLLOW (ledgers are never links), O_NONBLOCK (a FIFO planted under a
  // ledger's name must not block the open). The directory stays open for the next ledger in
  // it, and so does what its owner and mode were when it was opened: a directory that belongs
  // to the reader (or root) and that no one else may write to can only be changed by them.
  size_t slash = path.find_last_of('/');
  std::string dir = directory_of(path);
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (dir_fd_ < 0 || dir != dir_) {
    if (dir_fd_ >= 0) ::close(dir_fd_);
    dir_fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    dir_ = dir;
    dir_stat_errno_ = dir_fd_ >= 0 && ::fstat(dir_fd_, &dir_st_) != 0 ? errno : 0;
  }
  int fd = dir_fd_ >= 0 ? ::openat(dir_fd_, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK) : -1;
  if (fd < 0) {
    int err = errno;
    ErrorKind kind = err == ENOENT ? ErrorKind::NotFound : err == EACCES ? ErrorKind::PermissionDenied : ErrorKind::Io;
    std::string hint = err == ELOOP ? "ledgers are never symbolic links; pass the file itself"
                       : err == EACCES ? "ledgers are private (0600): read them as the user who ran the job"
                                       : "";
    return make_error(kind, fmt::format("cannot open ledger {}: {}", path, std::strerror(err)), hint);
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return make_error(ErrorKind::Usage, fmt::format("{} is not a regular file", path), "pass a ledger file");
  }
  if (dir_stat_errno_ != 0) {
    return make_error(ErrorKind::Io,
                      fmt::format("cannot inspect the directory of {}: {}", path, std::strerror(dir_stat_errno_)));
  }
  PYFRAMES_CHECK(check_ledger_trust(path, st, dir_st_, euid_));
  // A private copy read with pread, never a mapping: a file cut by someone else while mapped
  // would kill this process with SIGBUS (snapshot.h). Into memory kept from the last ledger:
  // only the parsed Ledger outlives this call.
  PYFRAMES_CHECK(snapshot_ledger_into(fd, static_cast<uint64_t>(st.st_size), path, bytes_, scratch_));
  auto parsed = Parser(bytes_.data(), bytes_.size(), path, bytes_kind, /*snapshot=*/true, &spare_records_).parse();
  if (copy != nullptr && parsed) copy->assign(bytes_.begin(), bytes_.end());
  constexpr size_t kKeptBytes = 4u << 20;  // a huge ledger's copy is not kept for the next one
  if (bytes_.capacity() > kKeptBytes) std::vector<unsigned char>().swap(bytes_);
  if (scratch_.early.capacity() > kKeptBytes) std::vector<unsigned char>().swap(scratch_.early);
  if (scratch_.after.capacity() > kKeptBytes) std::vector<unsigned char>().swap(scratch_.after);
  return parsed;
}

void LedgerReader::recycle(std::vector<CallRecord>&& records) {
  constexpr size_t kKeptRecords = 32768;  // 4 MiB: a huge ring's records are not kept for the next ledger
  if (records.capacity() > spare_records_.capacity() && records.capacity() <= kKeptRecords) spare_records_ = std::move(records);
}

pyframes::Result<Ledger> read_ledger_file(const std::string& path, LedgerBytes bytes_kind) {
  return LedgerReader().read(path, bytes_kind);
}

}  // namespace hangshim::ledger
