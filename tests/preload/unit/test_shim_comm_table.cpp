// The handle -> communicator table: lookups, replacement, erasure and slot reuse, and lookups
// racing with (serialized) insertions.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "shim/core/comm_table.h"

using hangshim::shim::CommTable;

TEST_CASE("comm table: insert, find, replace, erase") {
  CommTable table(16);
  CHECK(table.find(0x1000) == 0);
  CHECK(table.insert(0x1000, 1));
  CHECK(table.insert(0x2000, 2));
  CHECK(table.find(0x1000) == 1);
  CHECK(table.find(0x2000) == 2);
  CHECK(table.insert(0x1000, 5));  // a handle NCCL reuses for a new communicator
  CHECK(table.find(0x1000) == 5);
  table.erase(0x1000);
  CHECK(table.find(0x1000) == 0);
  CHECK(table.find(0x2000) == 2);
  CHECK_FALSE(table.insert(0, 3));
  CHECK(table.find(0) == 0);
}

TEST_CASE("comm table: erased slots are reused, so it never fills with dead handles") {
  CommTable table(8);
  for (uint64_t round = 0; round < 100; ++round) {
    for (uint64_t i = 0; i < 6; ++i) REQUIRE(table.insert((round * 8 + i + 1) * 64, static_cast<uint32_t>(i + 1)));
    for (uint64_t i = 0; i < 6; ++i) CHECK(table.find((round * 8 + i + 1) * 64) == i + 1);
    for (uint64_t i = 0; i < 6; ++i) table.erase((round * 8 + i + 1) * 64);
  }
  for (uint64_t i = 0; i < 8; ++i) CHECK(table.insert((i + 1) * 4096, 1));
  CHECK_FALSE(table.insert(999 * 4096, 1));  // truly full
}

TEST_CASE("comm table: lookups race with insertions and erasures") {
  CommTable table(1024);
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0};
  for (uint64_t i = 1; i <= 100; ++i) table.insert(i * 64, static_cast<uint32_t>(i));
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      while (!stop.load()) {
        for (uint64_t i = 1; i <= 100; ++i) {
          if (table.find(i * 64) != i) wrong.fetch_add(1);  // the stable entries never vanish
        }
      }
    });
  }
  for (int round = 0; round < 2000; ++round) {  // one writer, like the shim's registry mutex
    uint64_t handle = (1000 + static_cast<uint64_t>(round % 300)) * 64;
    table.insert(handle, 7);
    table.erase(handle);
  }
  stop = true;
  for (auto& r : readers) r.join();
  CHECK(wrong.load() == 0);
}
