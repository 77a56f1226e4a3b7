// Column ranges (3.11+ location tables) against the interpreters themselves: each 3.11+
// interpreter here compiles fixtures/linetable_sample.py and prints, for every code object, its
// co_linetable and code.co_positions() for every code unit; location_table_position must give
// the same four numbers (-1 for None) at every offset.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "mini_json.h"
#include "linetable/line_table.h"
#include "run_program.h"

using namespace pyframes;

namespace {

constexpr const char* kDumper = R"(
import json, sys
top = compile(open(sys.argv[1]).read(), "linetable_sample.py", "exec")
out = []
def visit(code):
    out.append({"name": code.co_name, "firstlineno": code.co_firstlineno, "table": code.co_linetable.hex(),
                "positions": [[-1 if x is None else x for x in p] for p in code.co_positions()]})
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            visit(const)
visit(top)
print(json.dumps(out))
)";

std::vector<std::string> interpreters_with_columns() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& version : std::filesystem::directory_iterator(HANGSHIM_PYENV_VERSIONS, ec)) {
    const std::string name = version.path().filename().string();
    if (name.rfind("3.", 0) != 0 || std::stoi(name.substr(2)) < 11) continue;
    if (std::filesystem::exists(version.path() / "bin/python3")) out.push_back((version.path() / "bin/python3").string());
  }
  if (std::filesystem::exists("/usr/bin/python3.11")) out.push_back("/usr/bin/python3.11");
  return out;
}

std::string unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

}  // namespace

TEST_CASE("location tables give the column ranges code.co_positions() gives") {
  const std::string sample =
      (std::filesystem::path(HANGSHIM_SOURCE_DIR) / "tests/pyframes/unit/fixtures/linetable_sample.py").string();
  auto pythons = interpreters_with_columns();
  if (pythons.empty()) {
    MESSAGE("no CPython 3.11+ interpreter here: nothing to compare with");
    return;
  }
  for (const auto& python : pythons) {
    CAPTURE(python);
    std::string out;
    REQUIRE(test_support::run_program({python, "-c", kDumper, sample}, &out) == 0);
    mini_json::Value codes = mini_json::parse(out);
    size_t compared = 0;
    for (const auto& code : codes.array()) {
      CAPTURE(code["name"].str());
      const std::string table = unhex(code["table"].str());
      const int firstlineno = code["firstlineno"].as_int();
      const auto& positions = code["positions"].array();
      for (size_t unit = 0; unit < positions.size(); ++unit) {
        CAPTURE(unit);
        Position got = location_table_position(table, firstlineno, static_cast<int>(unit * 2));
        const auto& want = positions[unit].array();
        REQUIRE(want.size() == 4);
        CHECK(got.line == want[0].as_int());
        CHECK(got.end_line == want[1].as_int());
        CHECK(got.column == want[2].as_int());
        CHECK(got.end_column == want[3].as_int());
        ++compared;
      }
    }
    CHECK(compared > 100);
  }
}

TEST_CASE("location table: long-form columns up to int's range, none past it (fuzz_linetable finding 2)") {
  // Code 14 (long form), line delta 0, end-line delta 0, then the column and end column, each
  // stored + 1 as a varint of up to six 6-bit groups. 2^31 stored is column INT_MAX (it was cast
  // to int first and then decremented: undefined); 2^31 + 1 stored is past int's range.
  const std::string table("\xf0\x00\x00\x40\x40\x40\x40\x40\x02\x41\x40\x40\x40\x40\x02", 16);
  Position got = location_table_position(table, 7, 0);
  CHECK(got.line == 7);
  CHECK(got.end_line == 7);
  CHECK(got.column == INT_MAX);
  CHECK(got.end_column == -1);
  CHECK(location_table_line(table, 7, 0) == 7);
}
