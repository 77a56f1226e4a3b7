// The reader treats every byte as untrusted: truncated, foreign, corrupt and random files give
// a clear Error or a snapshot with warnings, never a crash or an out-of-bounds read.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstring>
#include <random>
#include <vector>

#include "ledger/reader.h"
#include "ledger_test_util.h"

using namespace hangshim::ledger;
using ledger_test::TempDir;

namespace {

// The geometry of the small ledgers below: a 64-slot ring, 4 communicators and call-sites.
constexpr Geometry kSmall{.ring_capacity = 64, .comm_capacity = 4, .callsite_capacity = 4, .callsite_depth = 4,
                          .strings_size = 4096};

// A small ledger with a communicator, records and a call-site, as bytes.
std::vector<unsigned char> sample_bytes() {
  TempDir dir;
  auto w = ledger_test::make_writer(dir.file("s.ledger"), kSmall);
  if (!w) return {};
  CommInit init;
  init.key_kind = KeyKind::UniqueId;
  init.key = 42;
  init.rank = 0;
  init.nranks = 2;
  uint32_t comm = w->add_comm(init);
  FrameText frames[] = {{"/x/train.py", "step", 7, 0}};
  uint32_t site = w->add_callsite(frames, 0, 0, 5);
  for (int i = 0; i < 10; ++i) {
    RecordStart s;
    s.op = Op::AllReduce;
    s.comm = comm;
    s.callsite = site;
    s.seq = static_cast<uint64_t>(i + 1);
    uint64_t index = w->begin_record(s);
    w->record_returned(index, 2, 0, 0, 3);
  }
  const auto* base = reinterpret_cast<const unsigned char*>(&w->header());
  return std::vector<unsigned char>(base, base + w->file_size());
}

pyframes::ErrorKind kind_of(const std::vector<unsigned char>& bytes) {
  auto r = parse_ledger(bytes.data(), bytes.size(), "test");
  REQUIRE_FALSE(r.ok());
  return r.error().kind;
}

template <class T>
void poke(std::vector<unsigned char>& bytes, size_t offset, T value) {
  std::memcpy(bytes.data() + offset, &value, sizeof(T));
}

}  // namespace

TEST_CASE("ledger reader: the sample parses cleanly") {
  auto bytes = sample_bytes();
  REQUIRE(!bytes.empty());
  auto r = parse_ledger(bytes.data(), bytes.size(), "sample");
  REQUIRE(r.ok());
  CHECK(r->records.size() == 10);
  CHECK(r->callsites.size() == 1);
  CHECK(r->comms.size() == 1);
  CHECK(r->warnings.empty());
}

TEST_CASE("ledger reader: a memory image of the mapping may run on to the end of its last page") {
  auto bytes = sample_bytes();
  const size_t ledger_size = bytes.size();
  bytes.resize(ledger_size + 60 * 1024, 0xab);  // the rest of a 64 KiB page
  CHECK(kind_of(bytes) == pyframes::ErrorKind::Corrupt);  // as a file: bytes past its end are damage
  auto image = parse_ledger(bytes.data(), bytes.size(), "image", LedgerBytes::MappingImage);
  REQUIRE(image);
  auto file = parse_ledger(bytes.data(), ledger_size, "file");
  REQUIRE(file);
  CHECK(image->records.size() == file->records.size());
  CHECK(image->comms.size() == file->comms.size());
  CHECK(image->warnings == file->warnings);
  bytes.resize(ledger_size + 128 * 1024, 0xab);  // more than any page: not a mapping's tail
  CHECK(!parse_ledger(bytes.data(), bytes.size(), "image", LedgerBytes::MappingImage));
}

TEST_CASE("ledger reader: truncated, foreign and unfinished files are named as such") {
  auto bytes = sample_bytes();
  REQUIRE(!bytes.empty());
  SUBCASE("shorter than a header") {
    std::vector<unsigned char> cut(bytes.begin(), bytes.begin() + 100);
    CHECK(kind_of(cut) == pyframes::ErrorKind::Truncated);
  }
  SUBCASE("a short file that is no ledger at all") {
    std::vector<unsigned char> other(100, 'x');
    CHECK(kind_of(other) == pyframes::ErrorKind::Corrupt);
    CHECK(kind_of(std::vector<unsigned char>{}) == pyframes::ErrorKind::Corrupt);
  }
  SUBCASE("cut inside the sections") {
    std::vector<unsigned char> cut(bytes.begin(), bytes.end() - 1);
    CHECK(kind_of(cut) == pyframes::ErrorKind::Truncated);
  }
  SUBCASE("not a ledger") {
    std::vector<unsigned char> other(bytes.size(), 'x');
    CHECK(kind_of(other) == pyframes::ErrorKind::Corrupt);
  }
  SUBCASE("header never completed") {
    std::memset(bytes.data(), 0, 8);
    CHECK(kind_of(bytes) == pyframes::ErrorKind::Corrupt);
  }
  SUBCASE("another format version") {
    poke<uint32_t>(bytes, offsetof(Header, version), 7);
    auto r = parse_ledger(bytes.data(), bytes.size(), "test");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().kind == pyframes::ErrorKind::UnsupportedVersion);
    CHECK(r.error().message.find("version 7") != std::string::npos);
  }
}

TEST_CASE("ledger reader: impossible geometry is rejected") {
  auto bytes = sample_bytes();
  REQUIRE(!bytes.empty());
  SUBCASE("ring capacity not a power of two") { poke<uint32_t>(bytes, offsetof(Header, ring_capacity), 63); }
  SUBCASE("ring beyond the file") { poke<uint64_t>(bytes, offsetof(Header, ring_offset), bytes.size() - 8); }
  SUBCASE("sections overlap") {
    uint64_t comm_offset;
    std::memcpy(&comm_offset, bytes.data() + offsetof(Header, comm_offset), 8);
    poke<uint64_t>(bytes, offsetof(Header, ring_offset), comm_offset + 8);
  }
  SUBCASE("section inside the header") { poke<uint64_t>(bytes, offsetof(Header, strings_offset), 8); }
  SUBCASE("huge capacity") { poke<uint32_t>(bytes, offsetof(Header, callsite_capacity), 0xffffffffu); }
  SUBCASE("wrong entry size") { poke<uint32_t>(bytes, offsetof(Header, comm_entry_size), 255); }
  SUBCASE("offset overflowing 64 bits") { poke<uint64_t>(bytes, offsetof(Header, ring_offset), ~uint64_t{7}); }
  CHECK(kind_of(bytes) == pyframes::ErrorKind::Corrupt);
}

TEST_CASE("ledger reader: damaged entries are skipped with a warning") {
  auto bytes = sample_bytes();
  REQUIRE(!bytes.empty());
  uint64_t ring_offset, callsite_offset;
  std::memcpy(&ring_offset, bytes.data() + offsetof(Header, ring_offset), 8);
  std::memcpy(&callsite_offset, bytes.data() + offsetof(Header, callsite_offset), 8);
  // The ledger still reads: every record of the ring but the damaged one, and one warning for it.
  const auto reads_without_the_damaged_record = [&] {
    auto r = parse_ledger(bytes.data(), bytes.size(), "test");
    REQUIRE(r.ok());
    CHECK(r->records.size() == 9);
    CHECK(r->warnings.size() == 1);
  };
  SUBCASE("a record with an unknown op") {
    poke<uint8_t>(bytes, ring_offset + 3 * sizeof(RingEntry) + offsetof(RingEntry, op), 200);
    reads_without_the_damaged_record();
  }
  SUBCASE("a record whose result no NCCL returns (CI: overwritten bytes read as an init failure)") {
    poke<int32_t>(bytes, ring_offset + 4 * sizeof(RingEntry) + offsetof(RingEntry, result), -1895969507);
    reads_without_the_damaged_record();
  }
  SUBCASE("a record left half-written by a killed writer") {
    poke<uint64_t>(bytes, ring_offset + 5 * sizeof(RingEntry) + offsetof(RingEntry, stamp), 13);
    reads_without_the_damaged_record();
  }
  SUBCASE("a call-site naming a string outside the pool") {
    poke<uint32_t>(bytes, callsite_offset + sizeof(CallsiteEntry) + offsetof(CallsiteFrame, file), 1u << 30);
    auto r = parse_ledger(bytes.data(), bytes.size(), "test");
    REQUIRE(r.ok());
    CHECK(r->callsites.empty());
    CHECK(r->warnings.size() == 1);
  }
  SUBCASE("a call-site deeper than the ledger allows") {
    poke<uint16_t>(bytes, callsite_offset + offsetof(CallsiteEntry, depth), 60000);
    auto r = parse_ledger(bytes.data(), bytes.size(), "test");
    REQUIRE(r.ok());
    CHECK(r->callsites.empty());
  }
  SUBCASE("ring head far beyond what was written") {
    poke<uint64_t>(bytes, offsetof(Header, ring_head), 1000000);
    auto r = parse_ledger(bytes.data(), bytes.size(), "test");
    REQUIRE(r.ok());
    CHECK(r->records.empty());
    CHECK(!r->warnings.empty());
  }
}

TEST_CASE("ledger reader: a damaged ring head near 2^64 ends the read (fuzz_ledger finding 6)") {
  auto bytes = sample_bytes();
  REQUIRE(!bytes.empty());
  for (uint64_t head : {~uint64_t{0}, ~uint64_t{0} - 1, uint64_t{1} << 63}) {
    CAPTURE(head);
    poke<uint64_t>(bytes, offsetof(Header, ring_head), head);
    auto r = parse_ledger(bytes.data(), bytes.size(), "test");
    REQUIRE(r.ok());
    CHECK(r->records.empty());
    CHECK(!r->warnings.empty());
  }
}

TEST_CASE("ledger reader: a slot claimed but not yet written is busy, not corrupt") {
  // A writer moves the head first and takes the slot's stamp after it: a reader in between
  // finds the slot's previous record (index - capacity) there, or an older one of the same
  // slot when writers of several laps are preempted. Seen by the concurrent recorder test
  // (once under ThreadSanitizer, then 5 times in 400 runs of the release build), which counts
  // any "corrupt" warning.
  TempDir dir;
  auto w = ledger_test::make_writer(dir.file("wrapped.ledger"), kSmall);
  REQUIRE(w);
  for (uint64_t i = 0; i < 66; ++i) {
    RecordStart s;
    s.op = Op::AllReduce;
    s.seq = i + 1;
    w->record_returned(w->begin_record(s), 2, 0, 0, 3);
  }
  const auto* base = reinterpret_cast<const unsigned char*>(&w->header());
  std::vector<unsigned char> bytes(base, base + w->file_size());
  poke<uint64_t>(bytes, offsetof(Header, ring_head), 67);  // record 67 claimed; its slot holds record 3
  auto r = parse_ledger(bytes.data(), bytes.size(), "test");
  REQUIRE(r.ok());
  CHECK(r->records.size() == 63);  // records 4..66
  REQUIRE(r->warnings.size() == 1);
  CHECK(r->warnings[0].find("being written") != std::string::npos);
  CHECK(r->warnings[0].find("corrupt") == std::string::npos);
  // Two laps: records 68..131 claimed, none written yet; the slot of 131 still holds record 3
  // (the writer of 67 has not written either).
  poke<uint64_t>(bytes, offsetof(Header, ring_head), 131);
  r = parse_ledger(bytes.data(), bytes.size(), "test");
  REQUIRE(r.ok());
  CHECK(r->records.empty());
  REQUIRE(r->warnings.size() == 1);
  CHECK(r->warnings[0].find("being written") != std::string::npos);
  poke<uint64_t>(bytes, offsetof(Header, ring_head), 67);
  // A slot holding any other older record is damage.
  uint64_t ring_offset;
  std::memcpy(&ring_offset, bytes.data() + offsetof(Header, ring_offset), 8);
  poke<uint64_t>(bytes, ring_offset + 2 * sizeof(RingEntry) + offsetof(RingEntry, index), 2);
  r = parse_ledger(bytes.data(), bytes.size(), "test");
  REQUIRE(r.ok());
  REQUIRE(r->warnings.size() == 1);
  CHECK(r->warnings[0].find("corrupt") != std::string::npos);
}

TEST_CASE("ledger reader: a communicator of 2^31 ranks is damage, not a job the report walks rank by rank") {
  auto bytes = sample_bytes();
  REQUIRE(!bytes.empty());
  uint64_t comm_offset;
  std::memcpy(&comm_offset, bytes.data() + offsetof(Header, comm_offset), 8);
  for (int32_t nranks : {kMaxRanks + 1, int32_t{0x7fffffff}}) {
    CAPTURE(nranks);
    poke<int32_t>(bytes, comm_offset + offsetof(CommEntry, nranks), nranks);
    auto r = parse_ledger(bytes.data(), bytes.size(), "test");
    REQUIRE(r.ok());
    CHECK(r->comms.empty());
    REQUIRE(r->warnings.size() == 1);
    CHECK(r->warnings[0].find("corrupt") != std::string::npos);
  }
  poke<int32_t>(bytes, comm_offset + offsetof(CommEntry, nranks), kMaxRanks);
  auto r = parse_ledger(bytes.data(), bytes.size(), "test");
  REQUIRE(r.ok());
  CHECK(r->comms.size() == 1);
}

TEST_CASE("ledger reader: random damage never crashes it") {
  auto pristine = sample_bytes();
  REQUIRE(!pristine.empty());
  std::mt19937_64 random(12345);
  size_t parsed = 0;
  for (int round = 0; round < 3000; ++round) {
    auto bytes = pristine;
    int flips = 1 + static_cast<int>(random() % 16);
    for (int i = 0; i < flips; ++i) {
      // Mostly the header and the start of the sections, where the structure lives.
      size_t limit = (random() % 4 == 0) ? bytes.size() : std::min<size_t>(bytes.size(), 4096 + 64 * 256);
      bytes[random() % limit] = static_cast<unsigned char>(random());
    }
    auto r = parse_ledger(bytes.data(), bytes.size(), "fuzz");
    if (r.ok()) {
      ++parsed;
      for (const auto& record : r->records) CHECK(record.op < kOpCount);
    } else {
      CHECK(!r.error().message.empty());
    }
  }
  CHECK(parsed > 0);
}
