// The recorder under concurrency (the part of the shim a ThreadSanitizer build checks): threads
// issuing collectives and grouped point-to-point calls on their own communicators, the watchdog
// ticking every millisecond, a reader snapshotting the live ledger. Afterwards every counter
// and sequence must be exactly what the threads did.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <atomic>
#include <thread>
#include <vector>

#include "ledger/reader.h"
#include "ledger_test_util.h"
#include "shim/core/recorder.h"

using namespace hangshim;
using ledger_test::TempDir;

TEST_CASE("shim recorder: concurrent threads, watchdog and reader") {
  TempDir dir;
  setenv("HANGSHIM_DIR", dir.path().c_str(), 1);
  setenv("HANGSHIM_POLL_MS", "1", 1);
  setenv("HANGSHIM_RING", "1024", 1);
  setenv("RANK", "0", 1);
  shim::Recorder* recorder = shim::Recorder::instance();
  REQUIRE(recorder != nullptr);
  constexpr int kThreads = 4;
  constexpr int kCalls = 1500;
  static int handles[kThreads];  // made-up communicators: registered on first sight
  std::atomic<bool> stop{false};
  std::atomic<int> bad_snapshots{0};
  std::string first_bad;  // what the first bad snapshot showed (written by the reader only)
  auto bad = [&](std::string what) {
    if (bad_snapshots.fetch_add(1) == 0) first_bad = std::move(what);
  };
  std::string path = recorder->writer().path();
  std::thread reader([&] {
    while (!stop.load()) {
      // Records replaced or being written while the snapshot is taken are skipped (and said
      // so); what must never happen is an error, a corrupt entry or a record that is not one
      // the threads wrote.
      auto snapshot = ledger::read_ledger_file(path);
      if (!snapshot) {
        bad("error: " + snapshot.error().message);
        continue;
      }
      for (const auto& w : snapshot->warnings) {
        if (w.find("corrupt") != std::string::npos) bad("warning: " + w);
      }
      for (const auto& r : snapshot->records) {
        bool collective = r.op == static_cast<uint8_t>(ledger::Op::AllReduce) && r.red_op == 0;
        bool send = r.op == static_cast<uint8_t>(ledger::Op::Send) && r.peer == 1;
        if (r.count != 4 || r.dtype != 7 || !(collective || send)) {
          bad("record " + std::to_string(r.index) + ": op " + std::to_string(r.op) + " count " +
              std::to_string(r.count) + " dtype " + std::to_string(r.dtype));
        }
      }
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      shim::CallInfo coll;
      coll.op = ledger::Op::AllReduce;
      coll.comm = &handles[t];
      coll.count = 4;
      coll.dtype = 7;
      coll.red_op = 0;
      shim::CallInfo send = coll;
      send.op = ledger::Op::Send;
      send.peer = 1;
      for (int i = 0; i < kCalls; ++i) {
        recorder->end(recorder->begin(coll), 0);
        if (i % 10 == 0) {
          recorder->group_start();
          shim::CallToken a = recorder->begin(send);
          recorder->end(a, 0);
          shim::CallToken b = recorder->begin(send);
          recorder->end(b, 0);
          recorder->group_end(0);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  stop = true;
  reader.join();
  INFO("first bad snapshot: ", first_bad);
  CHECK(bad_snapshots.load() == 0);

  auto ledger = ledger::read_ledger_file(path);
  REQUIRE(ledger.ok());
  REQUIRE(ledger->comms.size() == kThreads);
  uint64_t groups = 0;
  for (const auto& c : ledger->comms) {
    CHECK(c.key_kind == static_cast<uint32_t>(ledger::KeyKind::Unknown));
    CHECK(c.coll_issued == kCalls);
    CHECK(c.coll_completed == kCalls);
    CHECK(c.p2p_issued == 2 * (kCalls / 10));
    CHECK(c.p2p_completed == 2 * (kCalls / 10));
    groups += kCalls / 10;
  }
  CHECK(ledger->header.group_count == groups);
  CHECK(ledger->header.ring_head == kThreads * (kCalls + 2 * (kCalls / 10)));
  CHECK(ledger->pending().empty());
  for (const auto& r : ledger->records) {
    CHECK(r.completed_ns >= r.issued_ns);
    if (r.op == static_cast<uint8_t>(ledger::Op::Send)) CHECK((r.flags & ledger::kRecordInGroup) != 0);
  }
}
