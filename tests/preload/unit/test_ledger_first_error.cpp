// The ledger's first-error area (format.h, Header::error_*): written once by the first failed
// call, bounded, read back with its record; damage is ignored with a warning, never trusted; and
// error names come from one table.
#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ledger/reader.h"
#include "ledger_test_util.h"

using namespace hangshim::ledger;
using ledger_test::TempDir;

namespace {

std::vector<unsigned char> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<unsigned char>(std::istreambuf_iterator<char>(in), {});
}

uint64_t failed_init(Writer& w) {
  RecordStart start;
  start.op = Op::CommInitRank;
  start.issued_ns = 1700000000000000000ull;
  uint64_t index = w.begin_record(start);
  w.record_returned(index, start.issued_ns + 10, 1, 0, start.issued_ns + 10);
  return index;
}

}  // namespace

TEST_CASE("ledger first error: the first failure's text is kept, later ones leave it alone") {
  TempDir dir;
  std::string path = dir.file("r3.ledger");
  auto w = ledger_test::make_writer(path);
  REQUIRE(w);
  {
    auto empty = read_ledger_file(path);
    REQUIRE(empty.ok());
    CHECK_FALSE(empty.value().header.first_error.present);
  }
  uint64_t index = failed_init(*w);
  const char* text = "Cuda failure 'CUDA driver version is insufficient for CUDA runtime version'";
  CHECK(w->set_first_error(index, 1, Op::CommInitRank, text));
  CHECK_FALSE(w->set_first_error(index, 2, Op::AllReduce, "a later failure"));
  auto r = read_ledger_file(path);
  REQUIRE(r.ok());
  const FirstError& e = r.value().header.first_error;
  CHECK(e.present);
  CHECK(e.record == index);
  CHECK(e.result == 1);
  CHECK(e.op == static_cast<uint8_t>(Op::CommInitRank));
  CHECK(e.text == text);
  CHECK(r.value().warnings.empty());
}

TEST_CASE("ledger first error: a long or unterminated text is cut at kErrorTextMax bytes") {
  TempDir dir;
  std::string path = dir.file("r3.ledger");
  auto w = ledger_test::make_writer(path);
  REQUIRE(w);
  std::vector<char> long_text(kErrorTextMax + 50, 'x');  // no NUL anywhere: strnlen must bound it
  CHECK(w->set_first_error(0, 3, Op::CommSplit, long_text.data()));
  auto r = read_ledger_file(path);
  REQUIRE(r.ok());
  CHECK(r.value().header.first_error.text == std::string(kErrorTextMax, 'x'));
  CHECK(r.value().header.first_error.record == 0);
}

TEST_CASE("ledger first error: NULL text from NCCL keeps the result without words") {
  TempDir dir;
  std::string path = dir.file("r3.ledger");
  auto w = ledger_test::make_writer(path);
  REQUIRE(w);
  CHECK(w->set_first_error(failed_init(*w), 2, Op::CommInitRank, nullptr));
  auto r = read_ledger_file(path);
  REQUIRE(r.ok());
  CHECK(r.value().header.first_error.present);
  CHECK(r.value().header.first_error.text.empty());
}

TEST_CASE("ledger first error: an unpublished or damaged area is not trusted") {
  TempDir dir;
  std::string path = dir.file("r3.ledger");
  auto w = ledger_test::make_writer(path);
  REQUIRE(w);
  uint64_t index = failed_init(*w);
  REQUIRE(w->set_first_error(index, 1, Op::CommInitRank, "text"));
  std::vector<unsigned char> bytes = file_bytes(path);
  auto poke32 = [&](size_t offset, uint32_t value) { std::memcpy(bytes.data() + offset, &value, 4); };
  auto parse = [&] { return parse_ledger(bytes.data(), bytes.size(), "test"); };
  // The ledger reads, without the first error, and with `warnings` warnings about it.
  auto not_trusted = [&](size_t warnings) {
    auto r = parse();
    REQUIRE(r.ok());
    CHECK_FALSE(r.value().header.first_error.present);
    CHECK(r.value().warnings.size() == warnings);
  };
  SUBCASE("being written (a writer killed half way)") {
    poke32(offsetof(Header, error_state), static_cast<uint32_t>(ErrorState::Writing));
    not_trusted(0);
  }
  SUBCASE("a state no writer writes") {
    poke32(offsetof(Header, error_state), 9);
    not_trusted(1);
  }
  SUBCASE("an op out of range") {
    poke32(offsetof(Header, error_op), 200);
    not_trusted(1);
  }
  SUBCASE("a result no NCCL returns") {
    poke32(offsetof(Header, error_result), 0x8f0300ddu);
    not_trusted(1);
  }
  SUBCASE("a record beyond the ring head") {
    uint64_t beyond = index + 5;
    std::memcpy(bytes.data() + offsetof(Header, error_record), &beyond, 8);
    auto r = parse();
    REQUIRE(r.ok());
    CHECK_FALSE(r.value().header.first_error.present);
  }
  SUBCASE("text without its NUL is still one bounded line") {
    std::memset(bytes.data() + offsetof(Header, error_text), 'y', sizeof(Header::error_text));
    auto r = parse();
    REQUIRE(r.ok());
    CHECK(r.value().header.first_error.text.size() <= sizeof(Header::error_text));
  }
}

TEST_CASE("ncclResult names: NCCL's spelling, one table for every renderer") {
  CHECK(result_name(0) == "ncclSuccess");
  CHECK(result_name(1) == "ncclUnhandledCudaError");
  CHECK(result_name(2) == "ncclSystemError");
  CHECK(result_name(6) == "ncclRemoteError");
  CHECK(result_name(7) == "ncclInProgress");
  CHECK(result_name(42) == "ncclResult 42");
  CHECK(std::string(nccl_function_name(static_cast<uint8_t>(Op::CommInitRank))) == "ncclCommInitRank");
  CHECK(is_failure(1));
  CHECK_FALSE(is_failure(0));
  CHECK_FALSE(is_failure(7));
  CHECK_FALSE(is_failure(-1));
}
