// Instruction offset -> source line, for the three line-table formats CPython has used.
// Each decoder walks the table forward exactly as PyCode_Addr2Line does for its version, bounded
// by the table's length (tables come from another process and may be garbage).
#pragma once

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

}  // namespace pyframes
