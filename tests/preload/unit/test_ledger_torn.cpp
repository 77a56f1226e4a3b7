// Torn-read stress: writer threads fill a small ring as fast as they can (so slots are reused
// constantly) while readers snapshot the live ledger and check every record they get. Each
// record's fields are all derived from one value, so any mix of two writes is detected.
#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <chrono>
#include <thread>
#include <vector>

#include "ledger/reader.h"
#include "ledger_test_util.h"

using namespace hangshim::ledger;
using ledger_test::TempDir;

namespace {

RecordStart derived(uint64_t v) {
  RecordStart s;
  s.op = static_cast<Op>(1 + v % 10);
  s.dtype = static_cast<uint8_t>(v % 12);
  s.peer = static_cast<int32_t>(v % 1000);
  s.red_op = static_cast<int32_t>(v % 5);
  s.comm = static_cast<uint32_t>(v % 4);
  s.thread = static_cast<uint32_t>(v % 100000);
  s.seq = v * 7;
  s.count = v * 3 + 1;
  s.stream = v ^ 0x5555;
  s.callsite_hit = v + 7;
  s.group = v * 2;
  s.comm_key = ~v;
  s.issued_ns = v;
  return s;
}

// Returns an empty string when the record is consistent, else what is wrong.
const char* check(const CallRecord& r) {
  uint64_t v = r.issued_ns;
  RecordStart s = derived(v);
  if (r.op != static_cast<uint8_t>(s.op) || r.dtype != s.dtype || r.peer != s.peer || r.red_op != s.red_op) return "small fields";
  if (r.comm != s.comm || r.thread != s.thread || r.seq != s.seq || r.count != s.count) return "counts";
  if (r.stream != s.stream || r.callsite_hit != s.callsite_hit || r.group != s.group || r.comm_key != s.comm_key) return "words";
  bool returned = r.returned_ns != 0;
  if (returned && (r.returned_ns != v + 1 || r.result != 0)) return "return";
  if (!returned && r.result != -1) return "result without return";
  if (r.completed_ns != 0 && r.completed_ns != v + 2) return "completion";
  return "";
}

}  // namespace

TEST_CASE("ledger: readers never see a torn record while writers reuse slots") {
  TempDir dir;
  // A small ring: its slots are overwritten thousands of times per second.
  constexpr Geometry kGeometry{.ring_capacity = 64};
  auto w = ledger_test::make_writer(dir.file("torn.ledger"), kGeometry);
  REQUIRE(w);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> next_value{1000};
  std::atomic<uint64_t> written{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < 3; ++t) {
    writers.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        uint64_t v = next_value.fetch_add(1000, std::memory_order_relaxed);
        uint64_t index = w->begin_record(derived(v));
        w->record_returned(index, v + 1, 0, 0, 0);
        w->record_completed(index, v + 2);
        written.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  std::atomic<uint64_t> checked{0};
  std::atomic<uint64_t> bad{0};
  std::vector<std::thread> readers;
  const auto* base = &w->header();
  uint64_t size = w->file_size();
  std::string path = w->path();
  // Three readers: the live mapping; a file read by a fresh reader each time (passes 1 and 2 of
  // the snapshot apart); and one reader kept from read to read, as a report keeps it, whose first
  // read then takes the header and the stamps "before" in one (snapshot.h).
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&, t] {
      LedgerReader kept;
      while (!stop.load(std::memory_order_relaxed)) {
        auto snapshot = t == 0 ? parse_ledger(base, size, "live") : t == 1 ? read_ledger_file(path) : kept.read(path);
        if (!snapshot) {
          bad.fetch_add(1);
          continue;
        }
        uint64_t last = 0;
        for (const auto& r : snapshot->records) {
          if (*check(r) != '\0' || r.index <= last) bad.fetch_add(1);
          last = r.index;
          checked.fetch_add(1, std::memory_order_relaxed);
        }
        if (t == 2) kept.recycle(std::move(snapshot->records));  // the next read fills this memory
      }
    });
  }
  // Runs for at least 1.5 s, and until the readers checked over 1000 records while the writers
  // went round the ring many times: the amount of work decides when to stop, not a fixed sleep a
  // loaded machine can spend without scheduling the threads. The deadline only ends a stuck run.
  const uint64_t laps = 20 * kGeometry.ring_capacity;
  const auto began = std::chrono::steady_clock::now();
  const auto deadline = began + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline &&
         (std::chrono::steady_clock::now() - began < std::chrono::milliseconds(1500) || checked.load() <= 1000 ||
          written.load() <= laps)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  stop = true;
  for (auto& t : writers) t.join();
  for (auto& t : readers) t.join();
  MESSAGE("records checked: " << checked.load() << ", records written: " << w->ring_head());
  CHECK(bad.load() == 0);
  CHECK(checked.load() > 1000);
  CHECK(written.load() > laps);
}

TEST_CASE("ledger: a ledger being created never shows under its own name unfinished") {
  // A reader lists the directory's *.ledger files while ledgers are made in it: each one it
  // finds must read whole (before, the file existed from open() on: empty, then with a header
  // whose magic was not yet stored, read as "never completed" by a test polling a starting job).
  TempDir dir;
  REQUIRE_FALSE(dir.path().empty());
  constexpr int kLedgers = 40;
  std::atomic<bool> done{false};
  std::thread maker([&] {
    for (int i = 0; i < kLedgers; ++i) {
      auto writer = ledger_test::make_writer(dir.file("hangshim-r" + std::to_string(i) + "-unit-1.ledger"));
      REQUIRE(writer != nullptr);
    }
    done = true;
  });
  int reads = 0;
  std::vector<std::string> failures;
  while (!done.load()) {
    std::error_code ignored;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path(), ignored)) {
      const std::string path = entry.path().string();
      if (entry.path().extension() != ".ledger") continue;
      auto ledger = read_ledger_file(path);
      ++reads;
      if (!ledger) failures.push_back(ledger.error().message);
    }
  }
  maker.join();
  CHECK(failures.empty());
  if (!failures.empty()) MESSAGE(failures.size() << " of " << reads << " reads failed, first: " << failures.front());
  size_t ledgers = 0, unfinished = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    ledgers += entry.path().extension() == ".ledger";
    unfinished += entry.path().extension() == ".new";
  }
  CHECK(ledgers == kLedgers);
  CHECK(unfinished == 0);
}
