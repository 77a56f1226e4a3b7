#include "native/split_parts.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string_view>

#include "native/eh_frame_table.h"

namespace pyframes::native {

namespace {

constexpr uint64_t kMaxScannedBytes = 4u << 20;  // of one function (the evaluation loop: ~100 KiB)
constexpr size_t kMaxAugmentation = 16;          // "zPLR" and friends; longer is not a real CIE

// Reads little-endian values and LEB128 numbers out of a byte range; a read past its end
// leaves `ok` false and returns 0, so a malformed table ends the parse, never the process.
class Cursor {
 public:
  explicit Cursor(std::string_view bytes) : bytes_(bytes) {}
  bool ok() const { return ok_; }
  size_t at() const { return at_; }

  uint64_t fixed(size_t size) {
    if (!ok_ || size > 8 || bytes_.size() - at_ < size) return fail();
    uint64_t value = 0;
    std::memcpy(&value, bytes_.data() + at_, size);  // little-endian: the low bytes come first
    at_ += size;
    return value;
  }
  uint64_t uleb() {
    uint64_t value = 0;
    for (unsigned shift = 0; ok_ && shift < 64; shift += 7) {
      const uint64_t byte = fixed(1);
      value |= (byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return value;
    }
    return fail();
  }
  std::string_view text(size_t max) {
    const size_t end = bytes_.find('\0', at_);
    if (!ok_ || end == std::string_view::npos || end - at_ > max) return fail(), std::string_view{};
    std::string_view value = bytes_.substr(at_, end - at_);
    at_ = end + 1;
    return value;
  }

 private:
  uint64_t fail() {
    ok_ = false;
    return 0;
  }
  std::string_view bytes_;
  size_t at_ = 0;
  bool ok_ = true;
};

// The encoding of the addresses in the FDEs of the CIE at `cie_vaddr` (its 'R' augmentation;
// absptr when it has none), nullopt for a CIE this reader does not understand.
std::optional<uint8_t> fde_pointer_encoding(const ElfFile& elf, uint64_t cie_vaddr) {
  Cursor cie(elf.bytes_at(cie_vaddr, std::numeric_limits<size_t>::max()));
  const uint64_t length = cie.fixed(4);
  if (length == 0 || length == 0xffffffff || cie.fixed(4) != 0) return std::nullopt;  // CIE id is 0
  const uint64_t version = cie.fixed(1);
  const std::string_view augmentation = cie.text(kMaxAugmentation);
  if (!cie.ok() || (version != 1 && version != 3) || augmentation.find("eh") != std::string_view::npos) {
    return std::nullopt;
  }
  cie.uleb();                             // code alignment
  cie.uleb();                             // data alignment (sleb: only skipped)
  version == 1 ? cie.fixed(1) : cie.uleb();  // return address register
  if (augmentation.empty() || augmentation[0] != 'z') return cie.ok() ? std::optional<uint8_t>(0) : std::nullopt;
  cie.uleb();  // augmentation data length
  for (char letter : augmentation.substr(1)) {
    if (letter == 'R') {
      const auto encoding = static_cast<uint8_t>(cie.fixed(1));
      return cie.ok() ? std::optional<uint8_t>(encoding) : std::nullopt;
    }
    if (letter == 'P') {
      const auto size = encoded_size(static_cast<uint8_t>(cie.fixed(1)));
      if (!size) return std::nullopt;
      cie.fixed(*size);
    } else if (letter == 'L') {
      cie.fixed(1);
    } else if (letter != 'S' && letter != 'B' && letter != 'G') {
      return std::nullopt;
    }
  }
  return cie.ok() ? std::optional<uint8_t>(0) : std::nullopt;
}

bool in_executable_segment(const ElfFile& elf, uint64_t address) {
  return std::any_of(elf.segments().begin(), elf.segments().end(), [&](const ElfSegment& segment) {
    return segment.executable && address >= segment.vaddr && address - segment.vaddr < segment.memsz;
  });
}

// Where the direct jumps (jmp rel32, jcc rel32) in `code`, placed at `start`, land outside
// [start, start + code.size()), ascending. The bytes are not decoded as instructions: an
// operand that happens to look like a jump gives a stray target, which the two-landings rule
// of split_parts_of keeps from naming anything.
std::vector<uint64_t> outside_jump_targets(std::string_view code, uint64_t start) {
  std::vector<uint64_t> targets;
  const auto* bytes = reinterpret_cast<const unsigned char*>(code.data());
  for (size_t i = 0; i + 5 <= code.size(); ++i) {
    size_t length = 0;
    if (bytes[i] == 0xe9) {
      length = 5;
    } else if (bytes[i] == 0x0f && i + 6 <= code.size() && (bytes[i + 1] & 0xf0) == 0x80) {
      length = 6;
    } else {
      continue;
    }
    int32_t displacement = 0;
    std::memcpy(&displacement, bytes + i + length - 4, 4);
    const uint64_t target = start + i + length + static_cast<uint64_t>(static_cast<int64_t>(displacement));
    if (target - start >= code.size()) targets.push_back(target);
  }
  std::sort(targets.begin(), targets.end());
  targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
  return targets;
}

}  // namespace

std::optional<CodeRange> unwind_range_at(const ElfFile& elf, uint64_t address) {
  const auto header_vaddr = elf.eh_frame_hdr();
  if (!header_vaddr) return std::nullopt;
  const std::string_view header = elf.bytes_at(*header_vaddr, std::numeric_limits<size_t>::max());
  const auto parsed = parse_eh_frame_header(header);
  if (!parsed || parsed->fde_count > (header.size() - parsed->size) / 8) return std::nullopt;  // what the file holds
  const uint64_t count = parsed->fde_count;
  const std::string_view table = header.substr(parsed->size, count * 8);
  auto entry = [&](uint64_t index, size_t field) {
    int32_t value = 0;
    std::memcpy(&value, table.data() + index * 8 + field * 4, 4);
    return *header_vaddr + static_cast<uint64_t>(static_cast<int64_t>(value));
  };
  // The last entry whose function starts at or before `address`.
  uint64_t low = 0, high = count;
  while (low < high) {
    const uint64_t middle = low + (high - low) / 2;
    if (entry(middle, 0) <= address) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  if (low == 0) return std::nullopt;
  const uint64_t begin = entry(low - 1, 0), fde_vaddr = entry(low - 1, 1);

  Cursor fde(elf.bytes_at(fde_vaddr, std::numeric_limits<size_t>::max()));
  const uint64_t length = fde.fixed(4);
  const uint64_t cie_pointer = fde.fixed(4);
  if (!fde.ok() || length == 0 || length == 0xffffffff || cie_pointer == 0 || cie_pointer > fde_vaddr + 4) {
    return std::nullopt;
  }
  const auto encoding = fde_pointer_encoding(elf, fde_vaddr + 4 - cie_pointer);
  const auto pointer_size = encoding ? encoded_size(*encoding) : std::nullopt;
  if (!pointer_size || *pointer_size == 0) return std::nullopt;
  fde.fixed(*pointer_size);                         // pc_begin: the table already gave it
  const uint64_t range = fde.fixed(*pointer_size);  // pc_range: the format without its application
  if (!fde.ok() || fde.at() > length + 4 || address - begin >= range) return std::nullopt;
  return CodeRange{begin, begin + range};
}

std::vector<CodeRange> split_parts_of(const ElfFile& elf, uint64_t start, uint64_t size) {
  const std::string_view code = elf.bytes_at(start, std::min(size, kMaxScannedBytes));
  struct Landing {
    CodeRange range;
    size_t count = 0;
    bool inside = false;  // one jump lands past the range's start
  };
  std::vector<Landing> landings;
  for (uint64_t target : outside_jump_targets(code, start)) {
    if (!in_executable_segment(elf, target)) continue;
    if (landings.empty() || target >= landings.back().range.end) {  // targets ascend: one lookup per range
      const auto range = unwind_range_at(elf, target);
      if (!range || range->start == start) continue;
      landings.push_back(Landing{*range});
    }
    if (target < landings.back().range.start) continue;
    ++landings.back().count;
    landings.back().inside = landings.back().inside || target != landings.back().range.start;
  }
  std::vector<CodeRange> parts;
  for (const Landing& landing : landings) {
    if (landing.count >= 2 && landing.inside) parts.push_back(landing.range);
  }
  return parts;
}

}  // namespace pyframes::native
