// Finding the parts GCC split off a function (native/split_parts.h) in stripped files, against
// independent truth: the .symtab of the unstripped fixture (GCC's own "split_work.cold"), and
// binutils' readelf for every unwind range (FDE) of the fixture and of Debian's interpreter.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "elf/elf_file.h"
#include "native/split_parts.h"
#include "run_program.h"

using namespace pyframes;

namespace {

const std::string kUnstripped = SPLIT_FUNCTION_FIXTURE;
const std::string kStripped = kUnstripped + ".stripped";

std::unique_ptr<ElfFile> open_elf(const std::string& path) {
  auto file = ElfFile::open(path);
  REQUIRE_MESSAGE(file.ok(), path);
  return std::move(file.value());
}

std::optional<ElfFunction> function_named(const ElfFile& elf, bool dynamic, std::string_view name) {
  for (const ElfFunction& f : elf.function_symbols(dynamic)) {
    if (f.name == name) return f;
  }
  return std::nullopt;
}

// Every FDE's [pc_begin, pc_end) as readelf prints it ("... FDE cie=... pc=A..B"), of this file
// alone: by default readelf also follows the debug link into a separate debug file where one is
// installed (python3.11-dbg for Debian's interpreter) and then exits 1 with its output complete;
// -wN (no-follow-links) keeps the truth independent of what else the machine has.
std::vector<native::CodeRange> readelf_ranges(const std::string& path) {
  std::string text;
  std::vector<native::CodeRange> ranges;
  if (test_support::run_program({"readelf", "-wN", "--debug-dump=frames", path}, &text) != 0) return ranges;
  // Parsed by hand: std::regex trips GCC 12's -Wmaybe-uninitialized under the sanitizers.
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t fde = line.find(" FDE cie="), pc = line.find(" pc=");
    const size_t dots = pc == std::string::npos ? pc : line.find("..", pc);
    if (fde == std::string::npos || dots == std::string::npos) continue;
    ranges.push_back({std::stoull(line.substr(pc + 4, dots - pc - 4), nullptr, 16),
                      std::stoull(line.substr(dots + 2), nullptr, 16)});
  }
  return ranges;
}

void check_ranges_match_readelf(const std::string& path) {
  auto elf = open_elf(path);
  const auto truth = readelf_ranges(path);
  REQUIRE_MESSAGE(!truth.empty(), "readelf printed no FDE for " << path);
  size_t checked = 0;
  for (const auto& range : truth) {
    if (range.end <= range.start) continue;
    for (uint64_t address : {range.start, range.start + (range.end - range.start) / 2, range.end - 1}) {
      const auto found = native::unwind_range_at(*elf, address);
      REQUIRE_MESSAGE(found.has_value(), path << ": no range at " << std::hex << address);
      CHECK(found->start == range.start);
      CHECK(found->end == range.end);
    }
    ++checked;
  }
  MESSAGE(path << ": " << checked << " unwind ranges as readelf prints them");
}

}  // namespace

TEST_CASE("native split parts: the part GCC split off, found in the stripped copy where .symtab names it") {
  auto unstripped = open_elf(kUnstripped);
  auto stripped = open_elf(kStripped);
  REQUIRE(unstripped->has_symtab());
  REQUIRE_FALSE(stripped->has_symtab());
  const auto cold = function_named(*unstripped, false, "split_work.cold");
  REQUIRE_MESSAGE(cold.has_value(), "the compiler did not split split_work (see fixtures/split_function.c)");
  const auto work = function_named(*stripped, true, "split_work");
  REQUIRE(work.has_value());

  const auto parts = native::split_parts_of(*stripped, work->value, work->size);
  REQUIRE(parts.size() == 1);
  CHECK(parts[0].start == cold->value);
  CHECK(parts[0].end >= cold->value + cold->size);
  // The function's own range, and main's, are not parts of it.
  const auto main_function = function_named(*stripped, true, "main");
  if (main_function) CHECK(native::split_parts_of(*stripped, main_function->value, main_function->size).empty());
}

TEST_CASE("native split parts: unwind ranges as readelf prints them (the fixture, Debian's interpreter)") {
  check_ranges_match_readelf(kStripped);
  if (std::filesystem::exists("/usr/bin/python3.11")) check_ranges_match_readelf("/usr/bin/python3.11");
}

TEST_CASE("native split parts: a damaged unwind table gives no range, never a crash") {
  auto elf = open_elf(kStripped);
  const ElfSection* header = elf->section(".eh_frame_hdr");
  const ElfSection* frames = elf->section(".eh_frame");
  REQUIRE(header != nullptr);
  REQUIRE(frames != nullptr);
  const auto work = function_named(*elf, true, "split_work");
  REQUIRE(work.has_value());
  std::string original(std::filesystem::file_size(kStripped), '\0');
  std::ifstream(kStripped, std::ios::binary).read(original.data(), static_cast<std::streamsize>(original.size()));
  const std::string damaged_path = kStripped + ".damaged";
  std::mt19937 random(7);
  for (int round = 0; round < 200; ++round) {
    std::string bytes = original;
    // The header's count claims more entries than the file holds, or random bytes in the
    // header, the table or the FDEs and CIEs.
    const ElfSection* target = round % 2 == 0 ? header : frames;
    if (round == 0) {
      for (size_t i = 8; i < 12; ++i) bytes[header->file_offset + i] = '\xff';
    } else {
      for (int n = 0; n < 16; ++n) {
        bytes[target->file_offset + random() % target->size] = static_cast<char>(random());
      }
    }
    std::ofstream(damaged_path, std::ios::binary | std::ios::trunc) << bytes;
    auto damaged = open_elf(damaged_path);
    if (round == 0) CHECK_FALSE(native::unwind_range_at(*damaged, work->value).has_value());
    for (uint64_t address = work->value; address < work->value + work->size; address += 7) {
      const auto range = native::unwind_range_at(*damaged, address);
      if (range) CHECK(range->start <= address);
    }
    (void)native::split_parts_of(*damaged, work->value, work->size);
  }
  std::filesystem::remove(damaged_path);
}
