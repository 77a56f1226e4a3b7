// The report's fast ledger reading (only the used parts, with pread) gives exactly what the
// ledger reader gives, for whole, wrapped, damaged and foreign files, one after the other
// through the same reused buffer.
#include <doctest/doctest.h>

#include <filesystem>

#include "report/sparse_read.h"
#include "report_test_util.h"

using namespace report_test;

namespace {

void check_same(const std::string& path) {
  auto fast = read_ledger_sparse(path);
  auto slow = hangshim::ledger::read_ledger_file(path);
  REQUIRE(fast.ok() == slow.ok());
  if (!slow) {
    CHECK(fast.error().message == slow.error().message);
    return;
  }
  const auto& a = fast.value();
  const auto& b = slow.value();
  CHECK(a.header.rank == b.header.rank);
  CHECK(a.header.ring_head == b.header.ring_head);
  CHECK(a.header.host == b.header.host);
  REQUIRE(a.comms.size() == b.comms.size());
  for (size_t i = 0; i < a.comms.size(); ++i) {
    CHECK(a.comms[i].key == b.comms[i].key);
    CHECK(a.comms[i].coll_issued == b.comms[i].coll_issued);
  }
  REQUIRE(a.records.size() == b.records.size());
  for (size_t i = 0; i < a.records.size(); ++i) {
    CHECK(a.records[i].index == b.records[i].index);
    CHECK(a.records[i].seq == b.records[i].seq);
    CHECK(a.records[i].callsite_hit == b.records[i].callsite_hit);
    CHECK(a.records[i].completed_ns == b.records[i].completed_ns);
  }
  REQUIRE(a.callsites.size() == b.callsites.size());
  for (size_t i = 0; i < a.callsites.size(); ++i) {
    REQUIRE(a.callsites[i].frames.size() == b.callsites[i].frames.size());
    for (size_t f = 0; f < a.callsites[i].frames.size(); ++f) {
      CHECK(a.callsites[i].frames[f].file == b.callsites[i].frames[f].file);
      CHECK(a.callsites[i].frames[f].line == b.callsites[i].frames[f].line);
    }
  }
  CHECK(a.warnings == b.warnings);
}

}  // namespace

TEST_CASE("report: the sparse ledger read equals the reader's, file after file") {
  ledger_test::TempDir dir;
  synth::Geometry small;
  small.ring = 16;  // the second rank wraps its ring
  std::vector<std::string> paths;
  for (int r = 0; r < 3; ++r) {
    synth::Rank rank = make_rank(r, 3);
    steps(rank, r % 5, r == 1 ? 40 : 5 + r, true);
    rank.pid = 5000 + r;
    std::string path;
    REQUIRE(synth::write(dir.path(), rank, r == 1 ? small : synth::Geometry{}, &path));
    paths.push_back(path);
  }
  // A bigger file first, then smaller ones: nothing of the first may show through.
  for (const auto& p : {paths[0], paths[1], paths[2], paths[0]}) check_same(p);
  std::string missing = dir.file("missing.ledger");
  check_same(missing);
  std::filesystem::copy_file(paths[2], dir.file("cut.ledger"));
  std::filesystem::resize_file(dir.file("cut.ledger"), 6000);
  check_same(dir.file("cut.ledger"));
}
