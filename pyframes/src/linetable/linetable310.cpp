// co_linetable of 3.10 (PEP 626): pairs of (unsigned byte length of a range, signed line delta);
// a delta of -128 marks a range without a line. Zero-length ranges only carry line deltas.
#include "linetable/line_table.h"

namespace pyframes {

int linetable310_line(std::string_view table, int firstlineno, int offset) {
  if (offset < 0) return firstlineno;
  int64_t computed_line = firstlineno;
  int64_t end = 0;
  for (size_t i = 0; i + 1 < table.size(); i += 2) {
    int length = static_cast<unsigned char>(table[i]);
    int delta = static_cast<signed char>(table[i + 1]);
    int line = -1;
    if (delta != -128) {
      computed_line += delta;
      line = line_or_none(computed_line);
    }
    end += length;
    if (length > 0 && offset < end) return line;
  }
  return -1;
}

}  // namespace pyframes
