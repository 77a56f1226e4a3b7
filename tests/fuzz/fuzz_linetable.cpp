// The three line-table decoders (lnotab, the 3.10 linetable, the 3.11+ location table) on
// hostile tables, first lines and offsets. Input: format selector (1 byte), firstlineno (4),
// offset (4), then the table. Seeds are real tables from every interpreter
// (tests/pyframes/unit/fixtures/linetables, written out by make_seeds.py).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "linetable/line_table.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 9) return 0;
  auto format = static_cast<pyframes::LineTableFormat>(data[0] % 3);
  int32_t firstlineno;
  int32_t offset;
  std::memcpy(&firstlineno, data + 1, 4);
  std::memcpy(&offset, data + 5, 4);
  std::string_view table(reinterpret_cast<const char*>(data + 9), size - 9);
  (void)pyframes::line_for_offset(format, table, firstlineno, offset);
  // Every offset the table could describe, as the walker asks for them.
  for (int at = 0; at < 64; at += 2) (void)pyframes::line_for_offset(format, table, firstlineno, at);
  return 0;
}
