// Ledger files are read by copying (snapshot.h), never through a mapping: a file cut or
// replaced by another process while it is read is an error naming the problem, not a SIGBUS
// that kills `hangshim report` in the middle of an incident.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "ledger/reader.h"
#include "ledger/snapshot.h"
#include "ledger/writer_lock.h"
#include "ledger_test_util.h"

using namespace hangshim::ledger;
using ledger_test::TempDir;

namespace {

std::vector<unsigned char> contents(Writer& w) {
  const auto* base = reinterpret_cast<const unsigned char*>(&w.header());
  return std::vector<unsigned char>(base, base + w.file_size());
}

void fill(Writer& w, int records) {
  CommInit init;
  init.key_kind = KeyKind::UniqueId;
  init.key = 7;
  init.rank = 0;
  init.nranks = 2;
  uint32_t comm = w.add_comm(init);
  FrameText frames[] = {{"/job/train.py", "step", 12, 0}};
  uint32_t site = w.add_callsite(frames, 0, 0, 1);
  for (int i = 0; i < records; ++i) {
    RecordStart s;
    s.op = Op::AllReduce;
    s.comm = comm;
    s.callsite = site;
    s.seq = static_cast<uint64_t>(i + 1);
    uint64_t index = w.begin_record(s);
    w.record_returned(index, 2, 0, 0, 3);
  }
}

}  // namespace

TEST_CASE("ledger snapshot: the copy parses like the file itself") {
  TempDir dir;
  auto w = ledger_test::make_writer(dir.file("s.ledger"), {.ring_capacity = 32});
  REQUIRE(w);
  fill(*w, 50);  // wrapped: the copied slots run across the end of the ring
  auto direct = parse_ledger(&w->header(), w->file_size(), "mapped");
  auto copied = read_ledger_file(w->path());
  REQUIRE(direct.ok());
  REQUIRE_MESSAGE(copied.ok(), copied.error().message);
  CHECK(copied->records.size() == 32);
  REQUIRE(copied->records.size() == direct->records.size());
  for (size_t i = 0; i < copied->records.size(); ++i) CHECK(copied->records[i].index == direct->records[i].index);
  CHECK(copied->comms.size() == 1);
  CHECK(copied->callsites.size() == 1);
  CHECK(copied->warnings.empty());
}

TEST_CASE("ledger snapshot: a record left half-written by a killed writer is skipped as busy") {
  TempDir dir;
  auto w = ledger_test::make_writer(dir.file("k.ledger"), {.ring_capacity = 16});
  REQUIRE(w);
  fill(*w, 3);
  RecordStart s;
  s.op = Op::Broadcast;
  w->begin_record(s);
  auto& h = w->header();
  auto* ring = reinterpret_cast<RingEntry*>(reinterpret_cast<unsigned char*>(&h) + h.ring_offset);
  stamp_lock(ring[3].stamp);  // SIGKILL between the stamp stores leaves it odd
  auto read = read_ledger_file(w->path());
  REQUIRE(read.ok());
  CHECK(read->records.size() == 3);
  REQUIRE_FALSE(read->warnings.empty());
  CHECK(read->warnings.front().find("being written") != std::string::npos);
}

TEST_CASE("ledger snapshot: a file shorter than it was a moment ago is named, not a SIGBUS") {
  TempDir dir;
  auto w = ledger_test::make_writer(dir.file("cut.ledger"));
  REQUIRE(w);
  int fd = ::open(w->path().c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  // As if fstat said the original size and the file was cut before the copy.
  REQUIRE(::truncate(w->path().c_str(), 8192) == 0);
  auto copy = snapshot_ledger(fd, w->file_size(), w->path());
  ::close(fd);
  REQUIRE_FALSE(copy.ok());
  CHECK(copy.error().kind == pyframes::ErrorKind::Truncated);
  CHECK(copy.error().message.find("shrank while being read") != std::string::npos);
  CHECK(copy.error().message.find(w->path()) != std::string::npos);
}

TEST_CASE("ledger snapshot: files cut and rewritten while being read give answers or errors, never a crash") {
  TempDir dir;
  std::vector<unsigned char> good;
  {
    auto w = ledger_test::make_writer(dir.file("model.ledger"));
    REQUIRE(w);
    fill(*w, 100);
    good = contents(*w);
  }
  std::string path = dir.file("victim.ledger");
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  REQUIRE(fd >= 0);
  std::atomic<bool> stop{false};
  std::atomic<size_t> rounds{0};
  std::thread vandal([&] {
    size_t round = 0;
    while (!stop.load()) {
      // Rewrite it whole, then cut it to a random-ish length, then scribble on the header.
      (void)::pwrite(fd, good.data(), good.size(), 0);
      (void)::ftruncate(fd, static_cast<off_t>((round * 7919) % good.size()));
      unsigned char junk[64];
      for (size_t i = 0; i < sizeof junk; ++i) junk[i] = static_cast<unsigned char>(round * 31 + i);
      (void)::pwrite(fd, junk, sizeof junk, static_cast<off_t>(round % 4096));
      rounds.store(++round);
    }
  });
  // A number of reads, not a time window: a slow machine (or a sanitizer build) reads fewer per
  // second, and the test is about what each read returns. The deadline only bounds a stuck run.
  int ok = 0, errors = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while ((ok + errors < 200 || rounds.load() < 50) && std::chrono::steady_clock::now() < deadline) {
    auto read = read_ledger_file(path);
    if (read) {
      ++ok;
    } else {
      ++errors;
      CHECK_FALSE(read.error().message.empty());
      CHECK(read.error().message.find(path) != std::string::npos);
    }
  }
  stop = true;
  vandal.join();
  ::close(fd);
  MESSAGE("reads: " << ok << " parsed, " << errors << " refused, " << rounds.load() << " rewrites");
  CHECK(ok + errors >= 200);
  CHECK(rounds.load() >= 50);
}

namespace {

// Copies the ledger at `path` with one scratch twice (the second time as the next ledger of a
// directory of the same geometry is copied) and says how many reads the second copy made.
struct CopiedTwice {
  std::vector<unsigned char> bytes;
  uint32_t reads = 0;
};
CopiedTwice copy_twice(const std::string& path) {
  CopiedTwice out;
  SnapshotScratch scratch;
  for (int round = 0; round < 2; ++round) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    struct stat st {};
    REQUIRE(::fstat(fd, &st) == 0);
    auto copied = snapshot_ledger_into(fd, static_cast<uint64_t>(st.st_size), path, out.bytes, scratch);
    ::close(fd);
    REQUIRE_MESSAGE(copied.ok(), copied.error().message);
  }
  out.reads = scratch.reads;
  return out;
}

std::vector<uint64_t> record_indices(const std::vector<unsigned char>& bytes) {
  auto parsed = parse_ledger_copy(bytes.data(), bytes.size(), "copy");
  REQUIRE_MESSAGE(parsed.ok(), parsed.error().message);
  std::vector<uint64_t> out;
  for (const auto& r : parsed->records) out.push_back(r.index);
  return out;
}

}  // namespace

TEST_CASE("ledger snapshot: a ledger nobody writes any more is copied in one read, as every pass would copy it") {
  TempDir dir;
  std::string path = dir.file("gone.ledger");
  {
    // Small tables, as a whole job's ledgers written with a small HANGSHIM_RING: every part in
    // use lies within a few KiB of the next, so one read reaches them all.
    auto w = ledger_test::make_writer(
        path, {.ring_capacity = 32, .comm_capacity = 4, .callsite_capacity = 8, .callsite_depth = 8, .strings_size = 4096});
    REQUIRE(w);
    CHECK((w->header().features & kFeatureWriterLock) != 0);
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    CHECK(find_writer_lock(fd) == WriterLock::Held);  // asked through another open of the file
    fill(*w, 50);
    CopiedTwice live = copy_twice(path);
    CHECK(live.reads >= 3);  // the seqlock passes: the writer is there
    ::close(fd);
    // The writer ends here (its process exiting does the same): the lock goes with it.
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  CHECK(find_writer_lock(fd) == WriterLock::Released);
  ::close(fd);
  CopiedTwice at_rest = copy_twice(path);
  CHECK(at_rest.reads == 1);
  // The same records as the passes find: hold the writer's lock as a live writer would.
  int holder = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  REQUIRE(holder >= 0);
  REQUIRE(take_writer_lock(holder));
  CopiedTwice passes = copy_twice(path);
  ::close(holder);
  CHECK(passes.reads >= 3);
  auto one = record_indices(at_rest.bytes), every = record_indices(passes.bytes);
  CHECK(one.size() == 32);
  CHECK(one == every);
}

TEST_CASE("ledger snapshot: a ledger without its writer's lock is copied with every pass when it cannot be told at rest") {
  TempDir dir;
  SUBCASE("an earlier writer, which never locked") {
    std::string path = dir.file("old.ledger");
    {
      auto w = ledger_test::make_writer(path, {.ring_capacity = 32});
      REQUIRE(w);
      fill(*w, 10);
      // As the writers before the lock wrote the header: no such feature.
      std::atomic_ref<uint32_t>(w->header().features).fetch_and(~uint32_t{kFeatureWriterLock});
    }
    CopiedTwice copied = copy_twice(path);
    CHECK(copied.reads >= 3);
    CHECK(record_indices(copied.bytes).size() == 10);
  }
  SUBCASE("a live process of this host, which may have closed the lock's descriptor") {
    std::string path = dir.file("here.ledger");
    hangshim::ledger::Identity id = ledger_test::test_identity();  // this process: alive
    char host[256] = {};
    REQUIRE(::gethostname(host, sizeof host - 1) == 0);
    id.host = host;
    auto made = Writer::create(path, {.ring_capacity = 32}, id);
    REQUIRE(made);
    auto w = std::move(made.value());
    fill(*w, 10);
    int holder = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(holder >= 0);
    w->abandon();  // closes the writer's descriptor: the lock ends, the process does not
    CHECK(find_writer_lock(holder) == WriterLock::Released);
    ::close(holder);
    CopiedTwice copied = copy_twice(path);
    CHECK(copied.reads >= 3);
    CHECK(record_indices(copied.bytes).size() == 10);
  }
}

TEST_CASE("ledger writer lock: a fork child dropping its copy of the ledger leaves the parent's lock") {
  TempDir dir;
  auto w = ledger_test::make_writer(dir.file("parent.ledger"), {.ring_capacity = 16});
  REQUIRE(w);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    w->abandon();  // what the shim's fork handler does in the child (recorder.cpp)
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  int fd = ::open(w->path().c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  CHECK(find_writer_lock(fd) == WriterLock::Held);
  ::close(fd);
}
