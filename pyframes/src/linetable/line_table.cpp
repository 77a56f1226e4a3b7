#include "linetable/line_table.h"

namespace pyframes {

int line_for_offset(LineTableFormat format, std::string_view table, int firstlineno, int offset) {
  if (offset < 0) return firstlineno;
  switch (format) {
    case LineTableFormat::Lnotab: return lnotab_line(table, firstlineno, offset);
    case LineTableFormat::Linetable310: return linetable310_line(table, firstlineno, offset);
    case LineTableFormat::Locations311: return location_table_line(table, firstlineno, offset);
  }
  return -1;
}

}  // namespace pyframes
