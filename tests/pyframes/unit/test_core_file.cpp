// The core file reader: every malformed input gets its own one-line error; truncated and
// gzip-compressed cores still open.
#include <doctest/doctest.h>
#include <zlib.h>

#include <cstddef>

#include "core/core_file.h"
#include "core_test_support.h"
#include "pyframes/core.h"

using namespace core_test;
using pyframes::ErrorKind;
using pyframes::ReadStatus;
using pyframes::core::CoreFile;

namespace {

SyntheticCore small_core() {
  SyntheticCore core;
  core.notes.push_back({"CORE", NT_PRSTATUS, prstatus(101, 0, 0x1000, 0x2000, 0x3000)});
  core.segments.push_back({0x10000, 0x2000, pattern(0x2000, 1)});
  core.segments.push_back({0x20000, 0x1000, pattern(0x1000, 2)});
  return core;
}

std::string open_error(const std::string& path, ErrorKind* kind = nullptr) {
  auto result = CoreFile::open(path);
  if (result.ok()) return "";
  if (kind) *kind = result.error().kind;
  return result.error().message + " | " + result.error().hint;
}

}  // namespace

TEST_CASE("core file: a well-formed core lists its segments and notes") {
  TempDir dir;
  write_file(dir.file("core"), small_core().build());
  auto file = CoreFile::open(dir.file("core"));
  REQUIRE(file.ok());
  REQUIRE(file->segments().size() == 2);
  CHECK(file->segments()[0].vaddr == 0x10000);
  CHECK(file->segments()[1].memsz == 0x1000);
  CHECK(file->notes().size() == 1);
  CHECK(file->notes()[0].name == "CORE");
  CHECK(file->missing_bytes() == 0);
  CHECK(file->machine() == EM_X86_64);
  CHECK(pyframes::looks_like_core(dir.file("core")));
}

TEST_CASE("core file: empty, text, executables and foreign cores are clear errors") {
  TempDir dir;
  ErrorKind kind{};

  write_file(dir.file("empty"), {});
  CHECK(open_error(dir.file("empty"), &kind).find("is empty") != std::string::npos);
  CHECK(kind == ErrorKind::Truncated);
  CHECK_FALSE(pyframes::looks_like_core(dir.file("empty")));

  write_file(dir.file("text"), Bytes{'h', 'e', 'l', 'l', 'o', '\n'});
  CHECK(open_error(dir.file("text"), &kind).find("not an ELF file") != std::string::npos);
  CHECK(kind == ErrorKind::Corrupt);

  SyntheticCore executable = small_core();
  executable.type = ET_EXEC;
  write_file(dir.file("exec"), executable.build());
  CHECK(open_error(dir.file("exec"), &kind).find("is an executable, not a core file") != std::string::npos);
  CHECK(kind == ErrorKind::Usage);
  CHECK_FALSE(pyframes::looks_like_core(dir.file("exec")));
  // A real program too: this test binary.
  CHECK(open_error("/proc/self/exe").find("not a core file") != std::string::npos);

  SyntheticCore i386 = small_core();
  i386.machine = EM_386;
  write_file(dir.file("i386"), i386.build());
  CHECK(open_error(dir.file("i386")).find("core of a i386 process") != std::string::npos);

  SyntheticCore narrow = small_core();
  narrow.elf_class = ELFCLASS32;
  write_file(dir.file("narrow"), narrow.build());
  CHECK(open_error(dir.file("narrow")).find("32-bit") != std::string::npos);

  SyntheticCore big = small_core();
  big.data = ELFDATA2MSB;
  write_file(dir.file("big"), big.build());
  CHECK(open_error(dir.file("big")).find("big-endian") != std::string::npos);

  Bytes odd_table = small_core().build();
  odd_table[offsetof(Elf64_Ehdr, e_phentsize)] = 40;
  write_file(dir.file("odd-table"), odd_table);
  CHECK(open_error(dir.file("odd-table")).find("program headers of 40 bytes") != std::string::npos);

  write_file(dir.file("core.zst"), Bytes{0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0});
  std::string zstd = open_error(dir.file("core.zst"));
  CHECK(zstd.find("zstd-compressed") != std::string::npos);
  CHECK(zstd.find("zstd -d") != std::string::npos);

  CHECK(open_error(dir.file("absent"), &kind).find("does not exist") != std::string::npos);
  CHECK(kind == ErrorKind::NotFound);
  CHECK(open_error(dir.path()).find("not a regular file") != std::string::npos);
}

TEST_CASE("core file: cuts inside the headers or the notes are errors, cuts in segments are counted") {
  TempDir dir;
  Bytes whole = small_core().build();

  write_file(dir.file("cut-ehdr"), Bytes(whole.begin(), whole.begin() + 40));
  CHECK(open_error(dir.file("cut-ehdr")).find("cut inside its ELF header") != std::string::npos);

  write_file(dir.file("cut-phdr"), Bytes(whole.begin(), whole.begin() + 100));
  CHECK(open_error(dir.file("cut-phdr")).find("program header table") != std::string::npos);

  size_t notes_end = sizeof(Elf64_Ehdr) + 3 * sizeof(Elf64_Phdr) + 20;
  write_file(dir.file("cut-notes"), Bytes(whole.begin(), whole.begin() + static_cast<long>(notes_end)));
  ErrorKind kind{};
  std::string message = open_error(dir.file("cut-notes"), &kind);
  CHECK(message.find("is truncated: ") != std::string::npos);
  CHECK(message.find(" bytes missing at its end, its notes") != std::string::npos);
  CHECK(kind == ErrorKind::Truncated);

  size_t keep = whole.size() - 0x1800;  // all of the second segment and half of the first
  write_file(dir.file("cut-segments"), Bytes(whole.begin(), whole.begin() + static_cast<long>(keep)));
  auto file = CoreFile::open(dir.file("cut-segments"));
  REQUIRE(file.ok());
  CHECK(file->missing_bytes() == 0x1800);
  unsigned char byte = 0;
  CHECK(file->read_file_bytes(file->segments()[0].offset, &byte, 1) == ReadStatus::Ok);
  CHECK(file->read_file_bytes(file->segments()[1].offset, &byte, 1) == ReadStatus::Unmapped);
}

TEST_CASE("core file: gzip cores are inflated to a temporary file and read like plain ones") {
  TempDir dir;
  Bytes whole = small_core().build();
  gzFile gz = gzopen(dir.file("core.gz").c_str(), "wb");
  REQUIRE(gz != nullptr);
  REQUIRE(gzwrite(gz, whole.data(), static_cast<unsigned>(whole.size())) == static_cast<int>(whole.size()));
  gzclose(gz);
  CHECK(pyframes::looks_like_core(dir.file("core.gz")));

  auto file = CoreFile::open(dir.file("core.gz"));
  REQUIRE(file.ok());
  CHECK(file->gzip());
  CHECK(file->size() == whole.size());
  REQUIRE(file->segments().size() == 2);
  Bytes segment(0x1000);
  REQUIRE(file->read_file_bytes(file->segments()[1].offset, segment.data(), segment.size()) == ReadStatus::Ok);
  CHECK(segment == pattern(0x1000, 2));
  CHECK(file->warnings().empty());

  // A .gz cut short: what was inflated is kept, with a warning; the core is then truncated.
  std::ifstream in(dir.file("core.gz"), std::ios::binary);
  Bytes compressed((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  write_file(dir.file("cut.gz"),
             Bytes(compressed.begin(), compressed.begin() + static_cast<long>(compressed.size() * 3 / 4)));
  auto cut = CoreFile::open(dir.file("cut.gz"));
  REQUIRE(cut.ok());
  REQUIRE(cut->warnings().size() == 1);
  CHECK(cut->warnings()[0].find("gzip data is damaged or cut") != std::string::npos);
  CHECK(cut->missing_bytes() > 0);
}
