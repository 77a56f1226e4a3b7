// Instruction offset -> source line, for the three line-table formats CPython has used.
// Each decoder walks the table forward exactly as PyCode_Addr2Line does for its version, bounded
// by the table's length (tables come from another process and may be garbage). Sums are kept
// in 64 bits: a hostile table cannot overflow them, and a line outside int's range is "no line".
#pragma once

#include <climits>
#include <cstdint>
#include <string_view>

#include "pyframes/layout.h"

namespace pyframes {

// The line of the instruction at byte offset `offset` (not code units), or -1 when the table
// has no line for it. Offsets < 0 (a frame that has not started) give `firstlineno`, as in
// CPython.
int line_for_offset(LineTableFormat format, std::string_view table, int firstlineno, int offset);

// The individual decoders (same contract).
int lnotab_line(std::string_view lnotab, int firstlineno, int offset);             // <= 3.9
int linetable310_line(std::string_view linetable, int firstlineno, int offset);    // 3.10
int location_table_line(std::string_view locations, int firstlineno, int offset);  // 3.11+

// The source range of one instruction (PEP 657, what code.co_positions() gives): columns are
// 0-based UTF-8 byte offsets into the line; -1 where the table has none.
struct Position {
  int line = -1;
  int end_line = -1;
  int column = -1;
  int end_column = -1;
};

// 3.11+: the position of the instruction at byte offset `offset`, field by field as
// code.co_positions() gives it (-1 where it gives None).
Position location_table_position(std::string_view locations, int firstlineno, int offset);

// A line computed in 64 bits, as the int the decoders return: -1 when it does not fit.
inline int line_or_none(int64_t line) { return line >= INT_MIN && line <= INT_MAX ? static_cast<int>(line) : -1; }

}  // namespace pyframes
