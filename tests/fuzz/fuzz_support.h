// Shared by the fuzz targets and their seed makers: fuzz input as a file (for readers that
// take a path), and the walker's input format (a sparse memory image with its target).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "pyframes/memory.h"
#include "pyframes/target.h"

namespace fuzz {

// The input as a file, through a memfd: readers that open paths (cores, ELF files, ledgers)
// read exactly the fuzzer's bytes, nothing touches the disk, and the file is gone on close.
class InputFile {
 public:
  InputFile(const uint8_t* data, size_t size) {
    fd_ = ::memfd_create("fuzz-input", MFD_CLOEXEC);
    if (fd_ < 0) return;
    const uint8_t* at = data;
    size_t left = size;
    while (left > 0) {
      ssize_t n = ::write(fd_, at, left);
      if (n <= 0) break;
      at += n;
      left -= static_cast<size_t>(n);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~InputFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  bool ok() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

// Walker input:
//   WalkerHeader
//   regions: { uint64 address; uint32 length; uint8 bytes[length] } until the end
// Regions are readable memory at fixed addresses (as recorded from a real interpreter by
// make_walker_seed, then mutated); everything else is unmapped.
struct WalkerHeader {
  uint8_t magic[4];     // "PFW1"
  uint8_t major;
  uint8_t minor;
  uint8_t micro;
  uint8_t flags;        // kWalkerLocals | kWalkerScan | kWalkerShallow
  uint32_t version_hex;
  uint32_t reserved;
  uint64_t runtime_address;
  uint64_t interp_head_address;
  uint64_t tstate_current_address;
  uint64_t data_start;  // the Python module's writable data, for the runtime scan
  uint64_t data_end;
};
static_assert(sizeof(WalkerHeader) == 56);

inline constexpr uint8_t kWalkerLocals = 1;   // read_stacks with locals
inline constexpr uint8_t kWalkerScan = 2;     // find the runtime by scanning data_start..data_end
inline constexpr uint8_t kWalkerShallow = 4;  // max_frames = 16

struct Region {
  uint64_t address;
  std::vector<uint8_t> bytes;
};

// Memory over regions; a read must lie inside one region (the seed maker merges touching ones).
class ImageMemory final : public pyframes::Memory {
 public:
  explicit ImageMemory(std::vector<Region> regions) : regions_(std::move(regions)) {
    std::sort(regions_.begin(), regions_.end(), [](const Region& a, const Region& b) { return a.address < b.address; });
  }
  pyframes::ReadStatus read(uint64_t address, void* out, size_t size) const noexcept override {
    auto it = std::upper_bound(regions_.begin(), regions_.end(), address,
                               [](uint64_t a, const Region& r) { return a < r.address; });
    if (it == regions_.begin()) return pyframes::ReadStatus::Unmapped;
    --it;
    uint64_t offset = address - it->address;
    if (offset > it->bytes.size() || size > it->bytes.size() - offset) return pyframes::ReadStatus::Unmapped;
    if (size > 0) std::memcpy(out, it->bytes.data() + offset, size);
    return pyframes::ReadStatus::Ok;
  }
  std::string describe() const override { return "fuzzed image"; }
  const std::vector<Region>& regions() const { return regions_; }

 private:
  std::vector<Region> regions_;
};

// Splits a walker input; false when it is too short for the header.
inline bool parse_walker_input(const uint8_t* data, size_t size, WalkerHeader& header, std::vector<Region>& regions) {
  if (size < sizeof(WalkerHeader)) return false;
  std::memcpy(&header, data, sizeof header);
  size_t at = sizeof header;
  while (size - at >= 12 && regions.size() < 4096) {
    Region region;
    uint32_t length;
    std::memcpy(&region.address, data + at, 8);
    std::memcpy(&length, data + at + 8, 4);
    at += 12;
    length = static_cast<uint32_t>(std::min<size_t>(length, size - at));
    region.bytes.assign(data + at, data + at + length);
    at += length;
    regions.push_back(std::move(region));
  }
  return true;
}

inline void append_region(std::vector<uint8_t>& out, uint64_t address, const uint8_t* bytes, uint32_t length) {
  const auto* a = reinterpret_cast<const uint8_t*>(&address);
  const auto* l = reinterpret_cast<const uint8_t*>(&length);
  out.insert(out.end(), a, a + 8);
  out.insert(out.end(), l, l + 4);
  out.insert(out.end(), bytes, bytes + length);
}

}  // namespace fuzz
