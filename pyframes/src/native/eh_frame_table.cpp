#include "native/eh_frame_table.h"

#include <algorithm>
#include <cstring>

namespace pyframes::native {

namespace {

// DWARF pointer encodings (LSB 4.1, "DWARF Exception Header Encoding").
constexpr uint8_t kOmit = 0xff;
constexpr uint8_t kFormatMask = 0x0f;
constexpr uint8_t kApplicationMask = 0x70;
constexpr uint8_t kDataRelSData4 = 0x3b;  // the only table encoding a binary search can use
constexpr uint64_t kMaxFdes = 1u << 24;   // bounds a damaged header

}  // namespace

std::optional<size_t> encoded_size(uint8_t encoding) {
  if (encoding == kOmit) return 0;
  switch (encoding & kFormatMask) {
    case 0x00: return 8;          // absptr
    case 0x02: case 0x0a: return 2;  // udata2, sdata2
    case 0x03: case 0x0b: return 4;  // udata4, sdata4
    case 0x04: case 0x0c: return 8;  // udata8, sdata8
    default: return std::nullopt;    // uleb128, sleb128
  }
}

std::optional<EhFrameHeader> parse_eh_frame_header(std::string_view bytes) {
  // version, eh_frame_ptr_enc, fde_count_enc, table_enc, then eh_frame_ptr and fde_count.
  if (bytes.size() < 4) return std::nullopt;
  const auto* head = reinterpret_cast<const unsigned char*>(bytes.data());
  const uint8_t frame_ptr_encoding = head[1], count_encoding = head[2], table_encoding = head[3];
  const auto frame_ptr_size = encoded_size(frame_ptr_encoding);
  const auto count_size = encoded_size(count_encoding);
  // A count relative to something, or no count at all, would need a linear search.
  if (head[0] != 1 || table_encoding != kDataRelSData4 || !frame_ptr_size || !count_size || *count_size == 0 ||
      (count_encoding & kApplicationMask) != 0) {
    return std::nullopt;
  }
  const size_t count_at = 4 + *frame_ptr_size;
  if (bytes.size() < count_at + *count_size) return std::nullopt;
  uint64_t count = 0;
  std::memcpy(&count, head + count_at, *count_size);  // little-endian: the low bytes come first
  const bool is_signed = (count_encoding & 0x08) != 0;
  if (is_signed && *count_size < 8 && (head[count_at + *count_size - 1] & 0x80) != 0) return std::nullopt;
  if (is_signed && *count_size == 8 && (count >> 63) != 0) return std::nullopt;
  if (count == 0 || count > kMaxFdes) return std::nullopt;
  return EhFrameHeader{count_at + *count_size, count};
}

std::optional<EhFrameTable> find_eh_frame_table(const LoadedModule& module, const Memory& memory) {
  const ElfFile& elf = module.elf();
  const auto header_vaddr = elf.eh_frame_hdr();
  if (!header_vaddr) return std::nullopt;

  EhFrameTable table;
  table.start_ip = UINT64_MAX;
  for (const auto& segment : elf.segments()) {
    if (!segment.executable || segment.memsz == 0) continue;
    table.start_ip = std::min(table.start_ip, segment.vaddr + module.bias());
    table.end_ip = std::max(table.end_ip, segment.vaddr + segment.memsz + module.bias());
  }
  if (table.start_ip >= table.end_ip) return std::nullopt;

  // The longest header's worth: a shorter one is followed by its table's first entries (and
  // linkers place .eh_frame after it in the same segment), so these bytes are mapped.
  table.header = *header_vaddr + module.bias();
  char bytes[kMaxEhFrameHeaderSize];
  if (memory.read(table.header, bytes, sizeof bytes) != ReadStatus::Ok) return std::nullopt;
  const auto header = parse_eh_frame_header(std::string_view(bytes, sizeof bytes));
  if (!header) return std::nullopt;
  table.fde_count = header->fde_count;
  table.table = table.header + header->size;
  return table;
}

}  // namespace pyframes::native
