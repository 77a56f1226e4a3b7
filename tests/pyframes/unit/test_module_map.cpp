#include <doctest/doctest.h>

#include "pyframes/module_map.h"
#include "pyframes/target.h"

using namespace pyframes;

TEST_CASE("ModuleMap finds the mapping that contains an address") {
  ModuleMap map({{0x2000, 0x3000, 0, true, false, false, "/lib/b.so"},
                 {0x1000, 0x2000, 0, true, false, true, "/lib/a.so"},
                 {0x5000, 0x6000, 0, true, true, false, "[heap]"}});
  REQUIRE(map.find(0x1000) != nullptr);
  CHECK(map.find(0x1000)->path == "/lib/a.so");
  CHECK(map.find(0x2fff)->path == "/lib/b.so");
  CHECK(map.find(0x3000) == nullptr);
  CHECK(map.find(0x0fff) == nullptr);
  CHECK(map.files() == std::vector<std::string>{"/lib/a.so", "/lib/b.so"});
  CHECK(map.find_file([](const std::string& name) { return name == "b.so"; }).value() == "/lib/b.so");
}

TEST_CASE("PyVersion prints what is known") {
  CHECK(PyVersion{3, 11, 7, 0}.str() == "3.11.7");
  CHECK(PyVersion{3, 6, -1, 0}.str() == "3.6");
  CHECK(PyVersion{}.str() == "unknown");
  CHECK(PyVersion{3, 12, 1, 0}.at_least(3, 11));
  CHECK_FALSE(PyVersion{3, 10, 1, 0}.at_least(3, 11));
}
