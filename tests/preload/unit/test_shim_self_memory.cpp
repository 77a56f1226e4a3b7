// The shim's self memory source: reads of the current process that never fault, a table that
// is re-read only on a miss, and the syscall mode for memory other threads may change.
#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "pyframes/self_memory.h"

using pyframes::ReadStatus;
using pyframes::SelfMemory;

namespace {

uint64_t address_of(const void* p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); }

// `unmap_safe`: the mode promises a safe answer even for memory unmapped after it was seen
// (syscall mode). Table mode is only for memory that stays mapped while read (see self_memory.h).
void check_reads(const SelfMemory& memory, bool unmap_safe) {
  static const char text[] = "static data";
  std::string heap(100, 'h');
  int on_stack = 1234;
  char buffer[128];
  CHECK(memory.read(address_of(text), buffer, sizeof(text)) == ReadStatus::Ok);
  CHECK(std::strcmp(buffer, text) == 0);
  CHECK(memory.read(address_of(heap.data()), buffer, heap.size()) == ReadStatus::Ok);
  CHECK(buffer[99] == 'h');
  int copy = 0;
  CHECK(memory.read(address_of(&on_stack), &copy, sizeof(copy)) == ReadStatus::Ok);
  CHECK(copy == 1234);
  CHECK(memory.read(0, buffer, 8) == ReadStatus::Unmapped);
  CHECK(memory.read(8, buffer, 8) == ReadStatus::Unmapped);
  CHECK(memory.read(~uint64_t{0} - 3, buffer, 8) == ReadStatus::Unmapped);

  long page = sysconf(_SC_PAGESIZE);
  // A page mapped after the table was built, then an inaccessible one, then an unmapped one.
  auto* fresh = static_cast<char*>(mmap(nullptr, static_cast<size_t>(page) * 3, PROT_READ | PROT_WRITE,
                                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  REQUIRE(fresh != MAP_FAILED);
  std::memset(fresh, 'f', static_cast<size_t>(page));
  REQUIRE(mprotect(fresh + page, static_cast<size_t>(page), PROT_NONE) == 0);
  REQUIRE(munmap(fresh + 2 * page, static_cast<size_t>(page)) == 0);
  CHECK(memory.read(address_of(fresh), buffer, 16) == ReadStatus::Ok);
  CHECK(buffer[15] == 'f');
  CHECK(memory.read(address_of(fresh + page), buffer, 8) != ReadStatus::Ok);
  CHECK(memory.read(address_of(fresh + 2 * page), buffer, 8) != ReadStatus::Ok);
  // A read that starts in a readable page and runs into an unreadable one fails as a whole.
  CHECK(memory.read(address_of(fresh + page - 4), buffer, 8) != ReadStatus::Ok);
  munmap(fresh, static_cast<size_t>(page) * 2);
  if (unmap_safe) CHECK(memory.read(address_of(fresh), buffer, 8) != ReadStatus::Ok);
}

}  // namespace

TEST_CASE("self memory (table): valid reads succeed, bad addresses fail without faulting") {
  SelfMemory memory(SelfMemory::Mode::Table);
  CHECK(memory.range_count() > 0);
  check_reads(memory, false);
}

TEST_CASE("self memory (syscall): same answers through the kernel") {
  SelfMemory memory(SelfMemory::Mode::Syscall);
  check_reads(memory, true);
}

TEST_CASE("self memory (table): hits do not re-read /proc/self/maps") {
  SelfMemory memory(SelfMemory::Mode::Table);
  std::vector<int> data(1000, 7);
  int value = 0;
  REQUIRE(memory.read(address_of(data.data()), &value, sizeof(value)) == ReadStatus::Ok);
  uint64_t before = memory.refresh_count();
  for (size_t i = 0; i < data.size(); ++i) {
    REQUIRE(memory.read(address_of(&data[i]), &value, sizeof(value)) == ReadStatus::Ok);
  }
  CHECK(memory.refresh_count() == before);
}

TEST_CASE("self memory (table): grows past its initial capacity") {
  // Two ranges are fewer than any process has: the table must grow, not lose ranges.
  SelfMemory memory(SelfMemory::Mode::Table, 2);
  CHECK(memory.range_count() > 2);
  check_reads(memory, false);
}

TEST_CASE("self memory: /proc/PID/maps parsing merges neighbours and skips device and vvar pages") {
  const char maps[] =
      "00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/python3\n"
      "00452000-00453000 r--p 00052000 08:02 173521      /usr/bin/python3\n"
      "00453000-00454000 rw-p 00053000 08:02 173521      /usr/bin/python3\n"
      "00460000-00470000 ---p 00000000 00:00 0\n"
      "00470000-00480000 rw-p 00000000 00:00 0           [heap]\n"
      "7f0000000000-7f0000001000 rw-s 00000000 00:05 12  /dev/nvidia0\n"
      "7f0000002000-7f0000003000 r--p 00000000 00:00 0   [vvar]\n"
      "7f0000003000-7f0000004000 r-xp 00000000 00:00 0   [vdso]\n"
      "garbage line\n"
      "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0  [vsyscall]";
  SelfMemory::Range ranges[8];
  bool overflow = true;
  size_t n = pyframes::parse_readable_ranges(maps, sizeof(maps) - 1, ranges, 8, &overflow);
  CHECK_FALSE(overflow);
  REQUIRE(n == 3);
  CHECK(ranges[0].start == 0x400000);
  CHECK(ranges[0].end == 0x454000);
  CHECK(ranges[1].start == 0x470000);
  CHECK(ranges[1].end == 0x480000);
  CHECK(ranges[2].start == 0x7f0000003000);
  SelfMemory::Range small[1];
  n = pyframes::parse_readable_ranges(maps, sizeof(maps) - 1, small, 1, &overflow);
  CHECK(n == 1);
  CHECK(overflow);
}
