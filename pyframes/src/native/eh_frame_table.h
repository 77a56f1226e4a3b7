// Where a module's unwind information is: the binary-search table of .eh_frame_hdr, which maps
// function start addresses to their FDEs in .eh_frame. The header's encodings are checked here;
// the table itself is searched in the target's memory by libunwind.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "elf/loaded_module.h"
#include "pyframes/memory.h"

namespace pyframes::native {

struct EhFrameTable {
  uint64_t start_ip = 0;    // the module's executable segments, as target addresses
  uint64_t end_ip = 0;      // exclusive
  uint64_t header = 0;      // target address of .eh_frame_hdr (the table's data-relative base)
  uint64_t table = 0;       // target address of the first of `fde_count` entries (two int32 each)
  uint64_t fde_count = 0;
};

// The fixed part of an .eh_frame_hdr that announces a table a binary search can use.
struct EhFrameHeader {
  size_t size = 0;         // bytes before the table: version, encodings, eh_frame_ptr, fde_count
  uint64_t fde_count = 0;  // entries of the table, two int32 each, relative to the header
};

// The longest such header: four bytes of version and encodings, an 8-byte eh_frame_ptr and an
// 8-byte count.
inline constexpr size_t kMaxEhFrameHeaderSize = 20;

// The header at the start of `bytes` (which may run on into the table): nullopt when they are
// too few, the version is not 1, the table's entries are not datarel sdata4 (the only encoding a
// binary search can use), or the count is absent, relative to something, negative, 0 or larger
// than a damaged header could be trusted with. One parser for both the target's memory
// (find_eh_frame_table) and a file's bytes (split_parts.cpp).
std::optional<EhFrameHeader> parse_eh_frame_header(std::string_view bytes);

// Bytes taken by a value of DWARF pointer `encoding` (0 for omitted), nullopt for the
// variable-length formats (uleb128, sleb128).
std::optional<size_t> encoded_size(uint8_t encoding);

// The table of `module`, its header read through `memory` (the bytes the process had mapped);
// nullopt when the module has no .eh_frame_hdr, or one without a searchable table.
std::optional<EhFrameTable> find_eh_frame_table(const LoadedModule& module, const Memory& memory);

}  // namespace pyframes::native
