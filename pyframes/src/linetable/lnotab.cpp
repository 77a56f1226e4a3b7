// co_lnotab (3.6-3.9): pairs of (unsigned byte-offset increment, signed line increment).
// A line applies from the address reached by its pair's offset increment onwards; large jumps
// are split into several pairs, which the running sums handle without special cases.
#include "linetable/line_table.h"

namespace pyframes {

int lnotab_line(std::string_view lnotab, int firstlineno, int offset) {
  if (offset < 0) return firstlineno;
  int64_t line = firstlineno;
  int64_t address = 0;
  for (size_t i = 0; i + 1 < lnotab.size(); i += 2) {
    address += static_cast<unsigned char>(lnotab[i]);
    if (address > offset) break;
    line += static_cast<signed char>(lnotab[i + 1]);
  }
  return line_or_none(line);
}

}  // namespace pyframes
