// ProcessMemory on a real address space (this process): exact bytes through both transports,
// with and without the page cache, across page boundaries; holes read as Unmapped and an
// exited process as ProcessGone.
#include <doctest/doctest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <vector>

#include "memory/process_memory.h"

using namespace pyframes;

namespace {

struct ThreePages {
  ThreePages() {
    // Far below where the kernel places new mappings (it takes the highest gap that fits): a
    // mapping made later by someone else (a sanitizer's runtime maps pages of its own) does not
    // land in the hole, which would make it readable.
    for (uintptr_t hint : {uintptr_t{0x6f0000000000}, uintptr_t{0x5f0000000000}}) {
      void* p = mmap(reinterpret_cast<void*>(hint), 3 * kPage, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
      if (p != MAP_FAILED) {
        base = static_cast<uint8_t*>(p);
        break;
      }
    }
    if (base == nullptr) {
      base = static_cast<uint8_t*>(mmap(nullptr, 3 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    }
    for (size_t i = 0; i < 3 * kPage; ++i) base[i] = static_cast<uint8_t>(i * 7 + 3);
    munmap(base + kPage, kPage);  // a hole in the middle
  }
  ~ThreePages() {
    munmap(base, kPage);
    munmap(base + 2 * kPage, kPage);
  }
  uint64_t at(size_t offset) const { return reinterpret_cast<uint64_t>(base + offset); }
  static constexpr size_t kPage = 4096;
  uint8_t* base = nullptr;
};

}  // namespace

TEST_CASE("ProcessMemory reads exact bytes and reports holes, with every transport and cache setting") {
  // Everything that allocates comes first: a sanitizer's allocator maps memory of its own, and
  // the kernel would happily place such a mapping in the hole the test makes.
  std::vector<std::unique_ptr<ProcessMemory>> memories;
  for (auto transport : {ProcessMemory::Transport::Auto, ProcessMemory::Transport::ProcMem}) {
    for (bool cache : {true, false}) memories.push_back(std::make_unique<ProcessMemory>(getpid(), cache, transport));
  }
  std::vector<uint8_t> out(600);
  std::vector<uint8_t> big(20000, 0x5a), copy(20000);
  for (const auto& memory : memories) memory->read(reinterpret_cast<uint64_t>(big.data()), copy.data(), copy.size());
  ThreePages pages;
  for (const auto& memory_ptr : memories) {
    {
      ProcessMemory& memory = *memory_ptr;
      CAPTURE(memory.describe());
      unsigned char residency = 0;
      REQUIRE_MESSAGE(mincore(pages.base + ThreePages::kPage, ThreePages::kPage, &residency) == -1,
                      "another mapping took the hole the test made");
      // Inside the first page, ending exactly at its end.
      REQUIRE(memory.read(pages.at(ThreePages::kPage - 600), out.data(), 600) == ReadStatus::Ok);
      CHECK(std::memcmp(out.data(), pages.base + ThreePages::kPage - 600, 600) == 0);
      // Running into the hole.
      CHECK(memory.read(pages.at(ThreePages::kPage - 8), out.data(), 16) == ReadStatus::Unmapped);
      CHECK(memory.read(pages.at(ThreePages::kPage + 100), out.data(), 8) == ReadStatus::Unmapped);
      CHECK_MESSAGE(mincore(pages.base + ThreePages::kPage, ThreePages::kPage, &residency) == -1,
                    "another mapping took the hole while it was read");
      // The third page, after the hole, and a larger-than-cache read of real memory.
      REQUIRE(memory.read(pages.at(2 * ThreePages::kPage + 10), out.data(), 100) == ReadStatus::Ok);
      CHECK(std::memcmp(out.data(), pages.base + 2 * ThreePages::kPage + 10, 100) == 0);
      REQUIRE(memory.read(reinterpret_cast<uint64_t>(big.data()), copy.data(), copy.size()) == ReadStatus::Ok);
      CHECK(copy == big);
      // Address arithmetic that would wrap is refused, not attempted.
      CHECK(memory.read(UINT64_MAX - 3, out.data(), 8) == ReadStatus::Unmapped);
      CHECK(memory.read_value<uint32_t>(0).has_value() == false);
    }
  }
}

TEST_CASE("ProcessMemory of an exited process reports ProcessGone") {
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) _exit(0);
  REQUIRE(waitpid(child, nullptr, 0) == child);  // reaped: the PID no longer exists
  uint64_t value = 0;
  uint64_t address = reinterpret_cast<uint64_t>(&value);
  CHECK(ProcessMemory(child, false).read(address, &value, 8) == ReadStatus::ProcessGone);
  CHECK(ProcessMemory(child, false, ProcessMemory::Transport::ProcMem).read(address, &value, 8) ==
        ReadStatus::ProcessGone);
  auto error = ProcessMemory(child).read_error(ReadStatus::ProcessGone, address, "a test value");
  CHECK(error.kind == ErrorKind::ProcessGone);
  CHECK(error.message.find(std::to_string(child)) != std::string::npos);
}
