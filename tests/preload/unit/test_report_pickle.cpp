// The bounded pickle reader and the writer behind Flight Recorder dumps
// (preload/report/inputs/flight_recorder/pickle_*), against Python's own pickle
// (tests/preload/unit/fixtures/pickle_oracle.py): what pickle.dumps writes is read as pickle.loads reads
// it, every accepted opcode included; what the writer writes pickle.loads reads back the same;
// what Python refuses is refused; anything else (GLOBAL, REDUCE, protocol 4) is refused by name
// and byte offset; cut, deep, large and self-referencing input stays within its limits.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "report/inputs/flight_recorder/pickle_opcodes.h"
#include "report/inputs/flight_recorder/pickle_reader.h"
#include "report/outputs/flight_recorder/pickle_writer.h"
#include "run_program.h"

namespace fs = std::filesystem;
using namespace std::string_literals;
using namespace hangshim::report::pickle;

namespace {

const std::string kOracle = std::string(HANGSHIM_SOURCE_DIR) + "/tests/preload/unit/fixtures/pickle_oracle.py";

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/hangshim-pickle-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path); }
};

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void write_bytes(const fs::path& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

// What Python's pickle.load makes of `bytes`: its canonical text, or "ERROR <exception type>".
std::string python_canon(const std::string& bytes) {
  TempDir dir;
  fs::path file = dir.path / "in.pkl";
  write_bytes(file, bytes);
  std::string out;
  int status = test_support::run_program({"python3", kOracle, "canon", file.string()}, &out);
  REQUIRE_MESSAGE(status == 0, "pickle_oracle.py canon failed to run");
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// The same from the C++ reader ("ERROR <message>" when it refuses).
std::string our_canon(const std::string& bytes, const Limits& limits = {}) {
  auto doc = read_pickle(bytes, limits);
  if (!doc) return "ERROR " + doc.error().message;
  auto text = canonical_text(*doc, doc->root(), 10000, size_t{1} << 28);
  return text ? *text : std::string("ERROR too deep or too large to write out");
}

std::string le32(uint32_t v) {
  std::string s;
  for (int i = 0; i < 4; ++i) s += static_cast<char>(v >> (8 * i));
  return s;
}

std::string unicode(std::string_view text) { return "X" + le32(static_cast<uint32_t>(text.size())) + std::string(text); }

const std::string kProto2 = "\x80\x02";

// Pickles made of each accepted opcode, as the TorchScript pickler or Python's pickle emits it
// (every one of them must appear here: checked below).
struct OpcodeCase {
  uint8_t code;
  std::string bytes;
};

std::vector<OpcodeCase> opcode_cases() {
  return {
      {op::kProto, kProto2 + "N."},
      {op::kStop, kProto2 + "N."},
      {op::kNone, kProto2 + "N."},
      {op::kNewTrue, kProto2 + "\x88."},
      {op::kNewFalse, kProto2 + "\x89."},
      {op::kBinInt1, kProto2 + "K\xff."},
      {op::kBinInt2, kProto2 + "M\x34\x12."},
      {op::kBinInt, kProto2 + "J\xfe\xff\xff\xff."},
      // LONG1 of 8 bytes is how the TorchScript pickler writes an int64 beyond 32 bits (a
      // time_created_ns); Python writes the fewest bytes; wider ones only extend the sign.
      {op::kLong1, kProto2 + "\x8a\x08\xcf\x1c\x25\x1f\x6c\x4c\xef\x17."s},
      {op::kLong1, kProto2 + "\x8a\x00."s},
      {op::kLong1, kProto2 + "\x8a\x01\xff."s},
      {op::kLong1, kProto2 + "\x8a\x0a\x00\x00\x00\x00\x00\x00\x00\x80\xff\xff."s},
      {op::kBinFloat, kProto2 + "G\x3f\xf8\x00\x00\x00\x00\x00\x00."s},
      {op::kBinUnicode, kProto2 + unicode("nccl:all_reduce") + "."},
      {op::kEmptyDict, kProto2 + "}."},
      {op::kEmptyList, kProto2 + "]."},
      {op::kEmptyTuple, kProto2 + ")."},
      {op::kMark, kProto2 + "(K\x01K\x02K\x03K\x04t."},
      {op::kTuple, kProto2 + "(K\x01K\x02K\x03K\x04t."},
      {op::kTuple1, kProto2 + "K\x01\x85."},
      {op::kTuple2, kProto2 + unicode("0") + unicode("default_pg") + "\x86."},
      {op::kTuple3, kProto2 + "K\x01K\x02K\x03\x87."},
      {op::kAppend, kProto2 + "]K\x07" "a."},
      {op::kAppends, kProto2 + "](K\x01K\x02" "e."},
      {op::kSetItem, kProto2 + "}" + unicode("k") + "K\x01s."},
      {op::kSetItems, kProto2 + "}(" + unicode("a") + "K\x01" + unicode("b") + "N" + "u."},
      // Strings memoized and fetched again, as the TorchScript pickler does for dict keys.
      {op::kBinPut, kProto2 + "](" + unicode("key") + "q\x00h\x00" "e."s},
      {op::kBinGet, kProto2 + "](" + unicode("key") + "q\x00h\x00" "e."s},
      {op::kLongBinPut, kProto2 + "](" + unicode("far") + "r" + le32(300) + "j" + le32(300) + "e."},
      {op::kLongBinGet, kProto2 + "](" + unicode("far") + "r" + le32(300) + "j" + le32(300) + "e."},
      // A list memoized before its items were appended is the same list wherever it is fetched.
      {op::kBinGet, kProto2 + "](]q\x01K\x05" "ah\x01" "e."},
  };
}

}  // namespace

TEST_CASE("pickle: every opcode a dump uses is read as Python's pickle reads it") {
  std::map<uint8_t, int> covered;
  for (const auto& c : opcode_cases()) {
    std::string name = opcode_name(c.code);
    CAPTURE(name);
    CAPTURE(c.bytes.size());
    std::string python = python_canon(c.bytes);
    REQUIRE(python.rfind("ERROR", 0) != 0);
    CHECK(our_canon(c.bytes) == python);
    ++covered[c.code];
  }
  for (int code = 0; code < 256; ++code) {
    if (is_accepted_opcode(static_cast<uint8_t>(code))) {
      std::string name = opcode_name(static_cast<uint8_t>(code));
      CAPTURE(name);
      CHECK(covered.count(static_cast<uint8_t>(code)) == 1);
    }
  }
}

TEST_CASE("pickle: what Python's pickle.dumps writes at protocol 2 is read the same") {
  TempDir dir;
  std::string names;
  REQUIRE(test_support::run_program({"python3", kOracle, "samples", dir.path.string()}, &names) == 0);
  std::istringstream lines(names);
  std::string name;
  int samples = 0;
  while (std::getline(lines, name)) {
    CAPTURE(name);
    std::string bytes = read_bytes(dir.path / (name + ".pkl"));
    CHECK(our_canon(bytes) == python_canon(bytes));
    ++samples;
  }
  CHECK(samples >= 15);
}

TEST_CASE("pickle: what the writer writes, Python reads back as the same values") {
  PickleWriter w;
  w.begin_dict();
  w.string("version");
  w.string("2.10");
  w.string("ints");
  w.begin_list();
  for (int64_t v : {int64_t{0}, int64_t{255}, int64_t{256}, int64_t{65535}, int64_t{65536}, int64_t{-1}, int64_t{INT32_MIN},
                    int64_t{INT32_MAX}, int64_t{INT32_MAX} + 1, INT64_MIN, INT64_MAX, int64_t{1724779239936775119}}) {
    w.integer(v);
  }
  w.end();
  w.string("process_group");
  w.begin_tuple();
  w.string("0");
  w.string("default_pg");
  w.end();
  w.string("tuples");
  w.begin_list();
  for (int n = 0; n <= 5; ++n) {
    w.begin_tuple();
    for (int i = 0; i < n; ++i) w.integer(i);
    w.end();
  }
  w.end();
  w.string("misc");
  w.begin_list();
  w.none();
  w.boolean(true);
  w.boolean(false);
  w.real(-2.5e-7);
  w.string("caf\xc3\xa9");
  w.string("version");  // fetched from the memo
  w.begin_dict();
  w.end();
  w.end();
  w.string("many strings");
  w.begin_list();
  for (int i = 0; i < 600; ++i) w.string(fmt::format("s{}", i % 300));  // LONG_BINPUT / LONG_BINGET past 255
  w.end();
  w.end();
  auto bytes = w.finish();
  REQUIRE(bytes);
  std::string ours = our_canon(*bytes);
  CHECK(ours.rfind("ERROR", 0) != 0);
  CHECK(python_canon(*bytes) == ours);
}

TEST_CASE("pickle: the writer refuses to finish a misused pickle") {
  {
    PickleWriter w;
    w.begin_list();
    CHECK(!w.finish());
  }
  {
    PickleWriter w;
    w.begin_dict();
    w.string("key without a value");
    w.end();
    auto r = w.finish();
    REQUIRE(!r);
    CHECK(r.error().message.find("key without its value") != std::string::npos);
  }
  {
    PickleWriter w;
    w.string("\xff not UTF-8");
    CHECK(!w.finish());
  }
  {
    PickleWriter w;
    w.none();
    w.none();
    CHECK(!w.finish());
  }
}

TEST_CASE("pickle: any other opcode is refused, named, with its byte offset") {
  for (int code = 0; code < 256; ++code) {
    if (is_accepted_opcode(static_cast<uint8_t>(code))) continue;
    std::string bytes = kProto2 + "]" + std::string(1, static_cast<char>(code)) + std::string(16, '\0') + ".";
    auto doc = read_pickle(bytes);
    REQUIRE(!doc);
    CAPTURE(code);
    CHECK(doc.error().message.find(fmt::format("0x{:02x}", code)) != std::string::npos);
    CHECK(doc.error().message.find("at byte 3") != std::string::npos);
    if (const char* name = opcode_name(static_cast<uint8_t>(code))) {
      CHECK(doc.error().message.find(name) != std::string::npos);
    }
  }
  // The opcodes that run code or build objects, as a hostile file would use them.
  std::string global = kProto2 + "cos\nsystem\n" + unicode("true") + "\x85R.";
  auto doc = read_pickle(global);
  REQUIRE(!doc);
  CHECK(doc.error().message == "opcode 0x63 (GLOBAL) is not one a Flight Recorder dump uses at byte 2");
  // Python's default protocol (4, framed) is refused with what to do.
  auto framed = read_pickle("\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00N."s);
  REQUIRE(!framed);
  CHECK(framed.error().message.find("pickle protocol 4 (PROTO at byte 0); Flight Recorder dumps are protocol 2") != std::string::npos);
}

TEST_CASE("pickle: what Python refuses is refused too") {
  const std::vector<std::string> damaged = {
      "",                                             // nothing
      kProto2,                                        // no STOP
      kProto2 + ".",                                  // STOP with an empty stack
      kProto2 + "a.",                                 // APPEND with nothing
      kProto2 + "}K\x01" "a.",                        // APPEND to a dict
      kProto2 + "]K\x01K\x02s.",                      // SETITEM on a list
      kProto2 + "}]K\x01s.",                          // a list as a dict key
      kProto2 + "}(K\x01u.",                          // SETITEMS with a key and no value
      kProto2 + "(K\x01" "e.",                        // APPENDS with no list below the mark
      kProto2 + "]K\x01" "e.",                        // APPENDS without a MARK
      kProto2 + "K\x01t.",                            // TUPLE without a MARK
      kProto2 + "\x87.",                              // TUPLE3 with nothing
      kProto2 + "(\x85.",                             // TUPLE1 reaching below a mark
      kProto2 + "h\x05.",                             // BINGET of an index never put
      kProto2 + "q\x00N."s,                            // BINPUT with an empty stack
      kProto2 + "X\x02\x00\x00\x00\xc3\x28."s,         // a string that is not UTF-8
      kProto2 + "X\xff\x00\x00\x00" "abc."s,           // a string longer than the file
      kProto2 + "J\x01\x02.",                         // BININT cut short
  };
  for (const auto& bytes : damaged) {
    CAPTURE(bytes.size());
    CHECK(python_canon(bytes).rfind("ERROR", 0) == 0);
    CHECK(our_canon(bytes).rfind("ERROR", 0) == 0);
  }
}

TEST_CASE("pickle: a cut at any byte of a dump is an error, never a crash") {
  TempDir dir;
  REQUIRE(test_support::run_program({"python3", kOracle, "dump", (dir.path / "dump.pkl").string()}) == 0);
  std::string dump = read_bytes(dir.path / "dump.pkl");
  REQUIRE(dump.size() > 500);
  REQUIRE(read_pickle(dump));
  for (size_t n = 0; n < dump.size(); ++n) {
    auto doc = read_pickle(std::string_view(dump).substr(0, n));
    CAPTURE(n);
    REQUIRE(!doc);
    CHECK(doc.error().message.find(fmt::format("the file ends at byte {}", n)) != std::string::npos);
  }
}

TEST_CASE("pickle: limits on size, values and marks") {
  std::string many = kProto2 + "]";
  for (int i = 0; i < 1000; ++i) many += "(K\x01" "e";
  many += ".";
  Limits small;
  small.max_values = 100;
  auto r = read_pickle(many, small);
  REQUIRE(!r);
  CHECK(r.error().message.find("more than 100 values") != std::string::npos);
  CHECK(read_pickle(many));

  small = {};
  small.max_bytes = 64;
  r = read_pickle(many, small);
  REQUIRE(!r);
  CHECK(r.error().message.find("more than the 64") != std::string::npos);

  // MARKs nested without end: refused at the limit, not a growing stack.
  std::string marks = kProto2 + std::string(100000, '(') + "N.";
  r = read_pickle(marks);
  REQUIRE(!r);
  CHECK(r.error().message.find("more than 64 MARKs open at once at byte 66") != std::string::npos);
}

TEST_CASE("pickle: values nested deep through the memo, or shared exponentially, stay bounded") {
  // Lists nested 100000 deep without a single MARK: each new list is appended to the one before,
  // fetched from the memo. Reading is linear; writing the value out stops at the depth asked.
  std::string deep = kProto2 + "]q\x00q\x01"s;
  for (int i = 0; i < 100000; ++i) deep += "h\x00]q\x00" "a"s;
  deep += "h\x01.";
  auto doc = read_pickle(deep);
  REQUIRE_MESSAGE(doc, (doc ? std::string() : doc.error().message));
  CHECK(doc->value_count() < 100010);
  CHECK(!canonical_text(*doc, doc->root(), 64, size_t{1} << 30));
  // A list that holds itself: read as Python reads it, written out only to the depth asked.
  auto self = read_pickle(kProto2 + "]q\x00h\x00" "a."s);
  REQUIRE(self);
  CHECK(!canonical_text(*self, self->root(), 64, 1 << 20));
  // Forty levels of a list holding the previous level twice: 2^40 items if copied, 80 values here.
  std::string laughs = kProto2 + "]q\x00"s;
  for (int i = 0; i < 40; ++i) laughs += "](h\x00h\x00" "eq\x00"s;
  laughs += ".";
  auto shared = read_pickle(laughs);
  REQUIRE(shared);
  CHECK(shared->value_count() < 100);
  CHECK(!canonical_text(*shared, shared->root(), 100, 1 << 20));
}
