#include "report/sparse_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "ledger/format.h"

namespace hangshim::report {

namespace {

using namespace hangshim::ledger;

// A buffer as large as the largest ledger read so far. Bytes the parser might read but this
// file's reads did not fill are zero, as in a fresh ledger: what the previous file left is
// cleared range by range before the next one is read.
class Buffer {
 public:
  unsigned char* prepare(size_t size) {
    for (const auto& [offset, length] : written_) std::memset(bytes_.data() + offset, 0, length);
    written_.clear();
    if (bytes_.size() < size) bytes_.resize(size);  // new bytes are zero
    return bytes_.data();
  }
  void wrote(size_t offset, size_t length) { written_.emplace_back(offset, length); }

 private:
  std::vector<unsigned char> bytes_;
  std::vector<std::pair<size_t, size_t>> written_;
};

bool read_range(int fd, Buffer& buffer, unsigned char* base, uint64_t offset, uint64_t length, uint64_t size) {
  if (length == 0) return true;
  if (offset > size || length > size - offset) return false;
  size_t done = 0;
  while (done < length) {
    ssize_t n = ::pread(fd, base + offset + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  buffer.wrote(offset, length);
  return true;
}

// The parts of the file the parser reads, from the header's counts (bounded by capacities).
bool read_used(int fd, Buffer& buffer, uint64_t size, unsigned char*& base) {
  base = buffer.prepare(size);
  if (!read_range(fd, buffer, base, 0, kHeaderSize, size)) return false;
  Header h;
  std::memcpy(&h, base, sizeof(h));
  if (h.file_size != size || h.header_size != kHeaderSize || h.comm_entry_size != sizeof(CommEntry) ||
      h.ring_entry_size != sizeof(RingEntry) || h.ring_capacity == 0) {
    return false;  // the reader names what is wrong
  }
  uint64_t comms = std::min<uint64_t>(h.comm_count, h.comm_capacity);
  uint64_t records = std::min<uint64_t>(h.ring_head, h.ring_capacity);
  uint64_t sites = std::min<uint64_t>(h.callsite_count, h.callsite_capacity);
  uint64_t strings = std::min<uint64_t>(h.strings_used, h.strings_size);
  // Record i (1-based) is in slot (i - 1) % capacity: the first `records` slots hold them.
  return read_range(fd, buffer, base, h.comm_offset, comms * sizeof(CommEntry), size) &&
         read_range(fd, buffer, base, h.ring_offset, records * sizeof(RingEntry), size) &&
         read_range(fd, buffer, base, h.callsite_offset, sites * h.callsite_entry_size, size) &&
         read_range(fd, buffer, base, h.strings_offset, strings, size);
}

}  // namespace

pyframes::Result<ledger::Ledger> read_ledger_sparse(const std::string& path) {
  static thread_local Buffer buffer;
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return ledger::read_ledger_file(path);
  struct stat st {};
  unsigned char* base = nullptr;
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= static_cast<off_t>(kHeaderSize) &&
            static_cast<uint64_t>(st.st_size) <= (uint64_t{1} << 32) &&
            read_used(fd, buffer, static_cast<uint64_t>(st.st_size), base);
  ::close(fd);
  if (!ok) return ledger::read_ledger_file(path);
  auto parsed = ledger::parse_ledger(base, static_cast<size_t>(st.st_size), path);
  if (!parsed || !parsed->warnings.empty()) return ledger::read_ledger_file(path);
  return parsed;
}

}  // namespace hangshim::report
