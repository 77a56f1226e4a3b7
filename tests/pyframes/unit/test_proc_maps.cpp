// /proc/PID/maps parsing and the container-aware file resolver.
#include <doctest/doctest.h>
#include <unistd.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "modules/maps_line.h"
#include "pyframes/proc_maps.h"

using namespace pyframes;

TEST_CASE("maps lines parse into mappings, paths with spaces and deleted files included") {
  std::string text =
      "55d4c8a00000-55d4c8a01000 r--p 00000000 08:01 1234                       /usr/bin/python3.11\n"
      "55d4c8a01000-55d4c8c00000 r-xp 00001000 08:01 1234                       /usr/bin/python3.11\n"
      "7f0000000000-7f0000021000 rw-p 00000000 00:00 0 \n"
      "7f1000000000-7f1000001000 rw-p 0002a000 08:01 99                         /opt/my lib/libpython3.12.so.1.0 (deleted)\n"
      "7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]\n"
      "garbage line\n";
  auto mappings = parse_proc_maps(text);
  REQUIRE(mappings.size() == 5);
  CHECK(mappings[0].path == "/usr/bin/python3.11");
  CHECK(mappings[0].readable);
  CHECK_FALSE(mappings[0].executable);
  CHECK(mappings[1].executable);
  CHECK(mappings[1].file_offset == 0x1000);
  CHECK(mappings[2].path.empty());
  CHECK(mappings[2].writable);
  CHECK(mappings[3].path == "/opt/my lib/libpython3.12.so.1.0");
  CHECK(mappings[3].file_offset == 0x2a000);
  CHECK(mappings[4].path == "[stack]");
  ModuleMap map(mappings);
  CHECK(map.files() == std::vector<std::string>{"/usr/bin/python3.11", "/opt/my lib/libpython3.12.so.1.0"});
}

TEST_CASE("this process's own maps, and files through /proc/PID/root") {
  auto map = read_proc_maps(getpid());
  REQUIRE(map.ok());
  auto here = reinterpret_cast<uint64_t>(&read_proc_maps);  // code of this test binary
  const Mapping* mapping = map->find(here);
  REQUIRE(mapping != nullptr);
  CHECK(mapping->executable);
  auto resolve = proc_root_resolver(getpid());
  CHECK(resolve(mapping->path) == "/proc/" + std::to_string(getpid()) + "/root" + mapping->path);
  CHECK(resolve("/no/such/file") == "/no/such/file");
  CHECK(resolve("[heap]") == "[heap]");
}

TEST_CASE("every line of this process's /proc/self/maps parses, ranges and offsets as the kernel wrote them") {
  std::FILE* file = std::fopen("/proc/self/maps", "re");
  REQUIRE(file != nullptr);
  std::string text;
  char buffer[4096];
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof buffer, file)) > 0) text.append(buffer, got);
  std::fclose(file);
  auto mappings = parse_proc_maps(text);
  REQUIRE(mappings.size() == static_cast<size_t>(std::count(text.begin(), text.end(), '\n')));
  size_t line_start = 0;
  for (const Mapping& mapping : mappings) {
    const std::string line = text.substr(line_start, text.find('\n', line_start) - line_start);
    line_start += line.size() + 1;
    CHECK(line.rfind(fmt::format("{:x}-{:x} ", mapping.start, mapping.end), 0) == 0);
    CHECK(line.find(fmt::format(" {:08x} ", mapping.file_offset)) != std::string::npos);
    if (!mapping.path.empty()) CHECK(line.find(mapping.path) != std::string::npos);
  }
}

TEST_CASE("one maps line parser serves the module map and the shim's own-memory table") {
  MapsLine line;
  REQUIRE(parse_maps_line("7f1000000000-7f1000001000 r-xp 0002a000 08:01 99   /opt/my lib/x.so (deleted)", line));
  CHECK(line.start == 0x7f1000000000);
  CHECK(line.end == 0x7f1000001000);
  CHECK(line.file_offset == 0x2a000);
  CHECK(line.readable);
  CHECK_FALSE(line.writable);
  CHECK(line.executable);
  CHECK(line.path == "/opt/my lib/x.so");
  // Cut after the offset (a path longer than the reader's buffer): the range survives.
  REQUIRE(parse_maps_line("7ffc00000000-7ffc00021000 rw-p 00000000", line));
  CHECK(line.end == 0x7ffc00021000);
  CHECK(line.path.empty());
  CHECK_FALSE(parse_maps_line("7ffc00000000 rw-p 00000000 00:00 0", line));       // no range
  CHECK_FALSE(parse_maps_line("7ffc0000000g-7ffc00021000 rw-p 0 00:00 0", line));  // not hex
  CHECK_FALSE(parse_maps_line("10000000000000000-1 rw-p 0 00:00 0", line));        // past 64 bits
  CHECK_FALSE(parse_maps_line("", line));
}
