// The location table of 3.11+ (PEP 657, Objects/locations.md). Each entry starts with a byte
// 1CCCCLLL: C = form code, L = length in code units - 1. Forms:
//   15     no location                 13  no columns: signed varint line delta
//   14     long: signed varint line delta, varint end-line delta, column+1, end column+1
//   10-12  one line: line delta = code - 10, then column and end-column bytes
//   0-9    short: same line, one byte of columns
// Varints are 6 bits per byte, low bits first, 0x40 = more; signed ones keep the sign in bit 0.
#include "linetable/line_table.h"

namespace pyframes {

namespace {

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool done() const { return at_ >= bytes_.size(); }
  uint8_t byte() { return done() ? 0 : static_cast<uint8_t>(bytes_[at_++]); }
  uint8_t peek() const { return done() ? 0 : static_cast<uint8_t>(bytes_[at_]); }
  unsigned varint() {
    unsigned read = byte();
    unsigned value = read & 63;
    unsigned shift = 0;
    while ((read & 64) != 0 && !done() && shift < 30) {
      read = byte();
      shift += 6;
      value |= (read & 63) << shift;
    }
    return value;
  }
  int signed_varint() {
    unsigned value = varint();
    return (value & 1) != 0 ? -static_cast<int>(value >> 1) : static_cast<int>(value >> 1);
  }
  // Skips the rest of an entry: everything up to the next byte with the high bit set.
  void skip_entry() {
    while (!done() && (peek() & 0x80) == 0) ++at_;
  }

 private:
  std::string_view bytes_;
  size_t at_ = 0;
};

// A long-form column is stored + 1 (0 = none); a varint can hold more than an int, and a
// column past int's range is "none" like a line past it (fuzz_linetable finding 2).
int stored_column(unsigned stored) {
  return stored == 0 || stored - 1 > static_cast<unsigned>(INT_MAX) ? -1 : static_cast<int>(stored - 1);
}

}  // namespace

Position location_table_position(std::string_view table, int firstlineno, int offset) {
  Position position;
  if (offset < 0) {
    position.line = firstlineno;
    return position;
  }
  Reader reader(table);
  int64_t computed_line = firstlineno;
  int64_t end = 0;
  while (!reader.done()) {
    uint8_t first = reader.byte();
    if ((first & 0x80) == 0) continue;  // not an entry start: resynchronise
    int code = (first >> 3) & 15;
    int length = ((first & 7) + 1) * 2;
    // As CPython's advance_with_locations / co_positions(): columns are stored + 1 in long form.
    Position here;
    switch (code) {
      case 15: break;
      case 14: {
        computed_line += reader.signed_varint();
        here.line = line_or_none(computed_line);
        here.end_line = line_or_none(computed_line + reader.varint());
        here.column = stored_column(reader.varint());
        here.end_column = stored_column(reader.varint());
        break;
      }
      case 13:
        computed_line += reader.signed_varint();
        here.line = here.end_line = line_or_none(computed_line);
        break;
      case 12:
      case 11:
      case 10:
        computed_line += code - 10;
        here.line = here.end_line = line_or_none(computed_line);
        here.column = reader.byte();
        here.end_column = reader.byte();
        break;
      default: {
        here.line = here.end_line = line_or_none(computed_line);
        int second = reader.byte();
        here.column = code * 8 + ((second >> 4) & 7);
        here.end_column = here.column + (second & 15);
        break;
      }
    }
    reader.skip_entry();
    end += length;
    if (offset < end) return here;
  }
  return position;
}

// The line alone is the position's line: one decoder of the table, so the two cannot disagree.
int location_table_line(std::string_view table, int firstlineno, int offset) {
  return location_table_position(table, firstlineno, offset).line;
}

}  // namespace pyframes
