// The writer's ledger read back by the reader: every field, the ring's order and wrap-around,
// call-sites with their strings, and the file's permissions.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <cstring>
#include <fstream>

#include "ledger/reader.h"
#include "ledger_test_util.h"

using namespace hangshim::ledger;
using ledger_test::TempDir;

TEST_CASE("ledger: header, communicators, records and call-sites read back as written") {
  TempDir dir;
  std::string path = dir.file("r3.ledger");
  auto w = ledger_test::make_writer(path);
  REQUIRE(w);

  CommInit init;
  init.key_kind = KeyKind::UniqueId;
  init.key = 0x1234567890abcdefull;
  init.rank = 3;
  init.nranks = 8;
  init.device = 3;
  init.handle = 0xdead0000;
  init.created_ns = 1700000000100000000ull;
  init.name = "default_pg";
  uint32_t comm = w->add_comm(init);
  REQUIRE(comm == 1);
  store_release(w->comm(comm)->state, static_cast<uint32_t>(CommState::Active));
  store_relaxed(w->comm(comm)->coll_issued, uint64_t{2});

  FrameText frames[] = {{"/usr/lib/python3/site-packages/torch/distributed/distributed_c10d.py", "all_reduce", 2501, kFrameLibrary},
                        {"/home/me/train.py", "train_step", 88, 0},
                        {"/home/me/train.py", "<module>", 120, 0}};
  uint32_t site = w->add_callsite(frames, 1, 0, 1700000000200000000ull);
  REQUIRE(site == 1);
  CHECK(w->hit_callsite(site) == 1);
  CHECK(w->hit_callsite(site) == 2);

  RecordStart start;
  start.op = Op::AllReduce;
  start.dtype = 7;
  start.red_op = 0;
  start.comm = comm;
  start.comm_key = init.key;
  start.seq = 1;
  start.count = 1024;
  start.stream = 0x77;
  start.callsite = site;
  start.callsite_hit = 1;
  start.thread = 4242;
  start.issued_ns = 1700000000300000000ull;
  uint64_t first = w->begin_record(start);
  w->record_returned(first, start.issued_ns + 1000, 0, 0, start.issued_ns + 1000);
  start.seq = 2;
  start.callsite_hit = 2;
  start.issued_ns += 5000;
  uint64_t second = w->begin_record(start);
  CHECK(first == 1);
  CHECK(second == 2);

  auto read = read_ledger_file(path);
  REQUIRE(read.ok());
  const Ledger& l = read.value();
  CHECK(l.header.pid == getpid());
  CHECK(l.header.rank == 3);
  CHECK(l.header.world_size == 8);
  CHECK(l.header.host == "unit-host");
  CHECK(l.header.job == "job-42");
  CHECK(l.header.command == "python train.py --epochs 3");
  CHECK(l.header.state == static_cast<uint32_t>(ProcessState::Running));
  CHECK(l.header.ring_head == 2);
  REQUIRE(l.comms.size() == 1);
  CHECK(l.comms[0].key == init.key);
  CHECK(l.comms[0].name == "default_pg");
  CHECK(l.comms[0].rank == 3);
  CHECK(l.comms[0].nranks == 8);
  CHECK(l.comms[0].coll_issued == 2);
  CHECK(l.comms[0].state == static_cast<uint32_t>(CommState::Active));
  REQUIRE(l.records.size() == 2);
  CHECK(l.records[0].index == 1);
  CHECK(l.records[0].op == static_cast<uint8_t>(Op::AllReduce));
  CHECK(l.records[0].count == 1024);
  CHECK(l.records[0].completed_ns == start.issued_ns - 5000 + 1000);
  CHECK(l.records[0].result == 0);
  CHECK(l.records[1].returned_ns == 0);
  CHECK(l.records[1].result == -1);
  CHECK(l.records[1].callsite_hit == 2);
  CHECK(l.pending().size() == 1);
  REQUIRE(l.callsites.size() == 1);
  const CallsiteInfo& c = l.callsites[0];
  CHECK(c.hits == 2);
  REQUIRE(c.frames.size() == 3);
  CHECK(c.frames[0].library);
  CHECK(c.frames[1].file == "/home/me/train.py");
  CHECK(c.frames[1].function == "train_step");
  CHECK(c.frames[1].line == 88);
  REQUIRE(your_line(c) != nullptr);
  CHECK(your_line(c)->line == 88);
  CHECK(l.warnings.empty());
}

TEST_CASE("ledger: the ring keeps the newest records in order after wrapping") {
  TempDir dir;
  auto w = ledger_test::make_writer(dir.file("wrap.ledger"), {.ring_capacity = 16});
  REQUIRE(w);
  for (uint64_t i = 1; i <= 100; ++i) {
    RecordStart s;
    s.op = Op::Send;
    s.seq = i;
    s.peer = 1;
    s.issued_ns = i;
    uint64_t index = w->begin_record(s);
    w->record_returned(index, i + 1, 0, 0, i + 2);
  }
  auto read = read_ledger_file(w->path());
  REQUIRE(read.ok());
  REQUIRE(read->records.size() == 16);
  for (size_t i = 0; i < 16; ++i) {
    CHECK(read->records[i].index == 85 + i);
    CHECK(read->records[i].seq == 85 + i);
  }
  // Record 84 was overwritten by record 100 (same slot): a late completion of 84 must not
  // touch 100.
  w->record_completed(84, 999);
  auto again = read_ledger_file(w->path());
  REQUIRE(again.ok());
  REQUIRE(again->records.size() == 16);
  CHECK(again->records[15].index == 100);
  CHECK(again->records[15].completed_ns == 102);
}

TEST_CASE("ledger: a writer preempted for a whole lap of the ring leaves the newer record in place") {
  TempDir dir;
  auto w = ledger_test::make_writer(dir.file("lap.ledger"), {.ring_capacity = 16});
  REQUIRE(w);
  RecordStart s;
  s.op = Op::AllReduce;
  for (uint64_t i = 1; i <= 19; ++i) {
    s.seq = i;
    w->record_returned(w->begin_record(s), 10, 0, 0, 20);
  }
  // The thread that claimed record 3 (the slot record 19 now holds) writes only now.
  w->header().ring_head = 2;
  s.seq = 1000;
  uint64_t late = w->begin_record(s);
  CHECK(late == 3);
  w->record_returned(late, 30, 0, 0, 40);
  w->header().ring_head = 19;
  auto read = read_ledger_file(w->path());
  REQUIRE(read.ok());
  REQUIRE(read->records.size() == 16);
  CHECK(read->records.back().index == 19);
  CHECK(read->records.back().seq == 19);
  CHECK(read->records.back().completed_ns == 20);
}

TEST_CASE("ledger: a record never returns or completes before it was issued") {
  // The hot path's clock is the TSC; a thread that moves to another CPU between issuing and
  // returning may read one a few ns behind. The writer keeps the record's times in order.
  TempDir dir;
  auto w = ledger_test::make_writer(dir.file("order.ledger"));
  REQUIRE(w);
  RecordStart s;
  s.op = Op::AllReduce;
  s.seq = 1;
  s.issued_ns = 5000;
  uint64_t returned = w->begin_record(s);
  w->record_returned(returned, 4990, 0, 0, 4980);
  s.seq = 2;
  uint64_t completed = w->begin_record(s);
  w->record_returned(completed, 5100, 0, 0, 0);
  w->record_completed(completed, 4999);
  auto read = read_ledger_file(w->path());
  REQUIRE(read.ok());
  REQUIRE(read->records.size() == 2);
  CHECK(read->records[0].returned_ns == 5000);
  CHECK(read->records[0].completed_ns == 5000);
  CHECK(read->records[1].returned_ns == 5100);
  CHECK(read->records[1].completed_ns == 5000);
}

TEST_CASE("ledger: files are private and never written through a planted link") {
  TempDir dir;
  std::string victim = dir.file("victim");
  { std::ofstream(victim) << "keep me"; }
  std::string path = dir.file("link.ledger");
  REQUIRE(symlink(victim.c_str(), path.c_str()) == 0);
  auto w = ledger_test::make_writer(path);
  REQUIRE(w);
  struct stat st {};
  REQUIRE(lstat(path.c_str(), &st) == 0);
  CHECK(S_ISREG(st.st_mode));
  CHECK((st.st_mode & 0777) == 0600);
  std::ifstream in(victim);
  std::string text;
  std::getline(in, text);
  CHECK(text == "keep me");
}

TEST_CASE("ledger: a full string pool or table drops call-sites and says so") {
  TempDir dir;
  auto w = ledger_test::make_writer(dir.file("full.ledger"), {.callsite_capacity = 2});
  REQUIRE(w);
  FrameText frame[] = {{"/a.py", "f", 1, 0}};
  CHECK(w->add_callsite(frame, 0, 0, 1) == 1);
  CHECK(w->add_callsite(frame, 0, 0, 1) == 2);
  CHECK(w->add_callsite(frame, 0, 0, 1) == 0);
  auto read = read_ledger_file(w->path());
  REQUIRE(read.ok());
  CHECK(read->header.dropped_callsites == 1);
  CHECK(read->callsites.size() == 2);
}
