// Line-table decoders against what real interpreters say: fixtures/linetables/*.json hold each
// interpreter's raw tables and its own PyCode_Addr2Line answer for every instruction offset
// (written by fixtures/gen_linetable_fixtures.py).
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "mini_json.h"
#include "linetable/line_table.h"

using namespace pyframes;

namespace {

std::string unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

LineTableFormat format_for(const std::string& version) {
  int minor = std::stoi(version.substr(2));
  return minor >= 11 ? LineTableFormat::Locations311 : minor == 10 ? LineTableFormat::Linetable310 : LineTableFormat::Lnotab;
}

}  // namespace

TEST_CASE("line tables decode like the interpreter that wrote them") {
  std::filesystem::path dir = std::filesystem::path(HANGSHIM_SOURCE_DIR) / "tests/pyframes/unit/fixtures/linetables";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    mini_json::Value fixture = mini_json::parse_file(entry.path().string());
    std::string version = fixture["version"].str();
    LineTableFormat format = format_for(version);
    CAPTURE(entry.path().filename().string());
    for (const auto& code : fixture["code_objects"].array()) {
      std::string table = unhex(code["table"].str());
      int firstlineno = code["firstlineno"].as_int();
      CAPTURE(code["name"].str());
      const auto& expected = code["addr2line"].array();
      for (size_t i = 0; i < expected.size(); ++i) {
        int offset = static_cast<int>(i * 2);
        CAPTURE(offset);
        CHECK(line_for_offset(format, table, firstlineno, offset) == expected[i].as_int());
      }
      // dis.findlinestarts: each start offset begins its line.
      for (const auto& start : code["starts"].array()) {
        int offset = start[0].as_int();
        CAPTURE(offset);
        CHECK(line_for_offset(format, table, firstlineno, offset) == start[1].as_int());
      }
      CHECK(line_for_offset(format, table, firstlineno, -1) == firstlineno);
    }
  }
  CHECK(files >= 8);
}

TEST_CASE("line-table decoders stay inside truncated tables") {
  // Past the end of a 3.10 or 3.11 table there is no line; lnotab keeps the last line.
  CHECK(lnotab_line(std::string("\x02\x01\x02\x01", 4), 10, 0) == 10);
  CHECK(lnotab_line(std::string("\x02\x01\x02\x01", 4), 10, 2) == 11);
  CHECK(lnotab_line(std::string("\x02\x01\x02\x01", 4), 10, 400) == 12);
  CHECK(lnotab_line(std::string("\x02\x01\x02", 3), 10, 400) == 11);  // odd length: last byte ignored
  CHECK(linetable310_line(std::string("\x04\x01", 2), 10, 2) == 11);
  CHECK(linetable310_line(std::string("\x04\x01", 2), 10, 4) == -1);
  CHECK(linetable310_line(std::string("\x04\x80", 2), 10, 0) == -1);  // -128: no line
  // A long-form entry (code 14, 1 code unit) whose varint runs off the end of the table.
  CHECK(location_table_line(std::string("\xf0\xff", 2), 10, 0) == 10 - 31);  // 0xff: 63, sign bit set
  CHECK(location_table_line(std::string("\xf0\xff", 2), 10, 2) == -1);
  // A no-location entry (code 15) covers its code units without a line.
  CHECK(location_table_line(std::string("\xf9", 1), 10, 2) == -1);
  CHECK(location_table_line(std::string("\xf9", 1), 10, 4) == -1);
  // Short form (code 0) two code units long, then a one-line entry with delta 2 (code 12).
  CHECK(location_table_line(std::string("\x81\x00\xe0\x00\x00", 5), 10, 2) == 10);
  CHECK(location_table_line(std::string("\x81\x00\xe0\x00\x00", 5), 10, 4) == 12);
}

TEST_CASE("line-table decoders: sums that leave int's range are no line, not an overflow") {
  // Fuzzing finding 1 (fuzz_linetable): huge varint deltas overflowed the running line of the
  // location table (undefined behaviour); the same held for long lnotab/3.10 tables.
  std::string huge_deltas;
  for (int i = 0; i < 8; ++i) huge_deltas += std::string("\xf0\x40\x40\x40\x40\x20", 6);  // code 14: +2^28 each
  CHECK(location_table_line(huge_deltas, INT_MAX - 10, 14) == -1);
  CHECK(location_table_line(std::string("\xe8\x02", 2), INT_MAX, 0) == -1);  // code 13, +1 past INT_MAX
  CHECK(location_table_line(std::string("\xe8\x03", 2), INT_MIN, 0) == -1);  // -1 below INT_MIN
  CHECK(location_table_line(std::string("\xe8\x02", 2), INT_MAX - 1, 0) == INT_MAX);
  std::string climbing;
  for (int i = 0; i < 4096; ++i) climbing += std::string("\x00\x7f", 2);  // +127 per pair, no address step
  CHECK(lnotab_line(climbing, INT_MAX - 1000, 0) == -1);
  CHECK(lnotab_line(std::string("\x00\x7f", 2), INT_MAX - 127, 0) == INT_MAX);
  std::string rising;
  for (int i = 0; i < 4096; ++i) rising += std::string("\x00\x7f", 2);  // zero-length ranges carry line deltas
  rising += std::string("\x02\x00", 2);
  CHECK(linetable310_line(rising, INT_MAX - 1000, 0) == -1);
  CHECK(linetable310_line(std::string("\x02\x7f", 2), INT_MAX - 127, 0) == INT_MAX);
}
