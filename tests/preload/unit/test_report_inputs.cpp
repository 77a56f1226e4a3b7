// Reading what the user names: directories, damaged files (one error each, the rest is read),
// earlier runs' ledgers, and exports carrying ledgers byte for byte.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "ledger/format.h"
#include "report/inputs/base64.h"
#include "report/outputs/export_write.h"
#include "report_test_util.h"

using namespace report_test;
namespace fs = std::filesystem;

namespace {

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

template <class T>
void patch(std::string& bytes, size_t offset, T value) {
  std::memcpy(&bytes[offset], &value, sizeof(value));
}

Inputs load(const std::string& dir) {
  Inputs inputs;
  LoadOptions options;
  options.here = "the-test-host";
  options.now_ns = kStart;
  load_path(dir, inputs, options);
  settle_inputs(inputs);
  return inputs;
}

}  // namespace

TEST_CASE("report inputs: each damaged file is one error naming it, the good ledgers are still read") {
  Job job(2);
  for (int r = 0; r < 2; ++r) steps(job[r], 0, r == 0 ? 3 : 2, r == 0);
  job.write();
  std::string good;
  for (const auto& entry : fs::directory_iterator(job.dir.path())) {
    if (entry.path().string().find("r00001") != std::string::npos) good = read_bytes(entry.path());
  }
  REQUIRE(good.size() > hangshim::ledger::kHeaderSize);
  using hangshim::ledger::Header;
  struct Case {
    const char* name;
    std::string bytes;
    const char* expected;
  };
  std::vector<Case> cases;
  std::string b = good;
  b[0] = 'X';
  cases.push_back({"bad-magic.ledger", b, "not a hangshim ledger"});
  cases.push_back({"truncated.ledger", good.substr(0, good.size() / 2), "the ledger says it has"});
  b = good;
  patch(b, offsetof(Header, version), uint32_t{99});
  cases.push_back({"foreign.ledger", b, "ledger format version 99"});
  b = good;
  patch(b, offsetof(Header, ring_capacity), uint32_t{1u << 31});
  cases.push_back({"huge-ring.ledger", b, "corrupt ledger header: ring capacity"});
  b = good;
  patch(b, offsetof(Header, strings_offset), uint64_t{1} << 40);
  cases.push_back({"outside.ledger", b, "strings section outside the file"});
  b = good;
  patch(b, offsetof(Header, callsite_offset), *reinterpret_cast<const uint64_t*>(&good[offsetof(Header, ring_offset)]));
  cases.push_back({"overlap.ledger", b, "overlap"});
  cases.push_back({"empty.ledger", std::string(), "bytes"});
  for (const auto& c : cases) write_bytes(job.dir.file(c.name), c.bytes);
  REQUIRE(::symlink(job.dir.file("foreign.ledger").c_str(), job.dir.file("link.ledger").c_str()) == 0);
  REQUIRE(::mkfifo(job.dir.file("fifo.ledger").c_str(), 0600) == 0);  // must not block the report

  Inputs inputs = load(job.dir.path());
  CHECK(inputs.ranks.size() == 2);
  CHECK(inputs.errors.size() == cases.size() + 2);
  for (const auto& c : cases) {
    size_t found = 0;
    for (const auto& e : inputs.errors) {
      if (e.message.find(c.name) != std::string::npos) {
        ++found;
        CHECK_MESSAGE(e.message.find(c.expected) != std::string::npos, e.message);
      }
    }
    CHECK_MESSAGE(found == 1, c.name);
  }
  auto mentions = [&](const char* what, const char* name) {
    return std::any_of(inputs.errors.begin(), inputs.errors.end(), [&](const InputError& e) {
      return e.message.find(name) != std::string::npos && e.message.find(what) != std::string::npos;
    });
  };
  CHECK(mentions("symbolic link", "link.ledger"));
  CHECK(mentions("not a regular file", "fifo.ledger"));
  Diagnosis d = diagnose(inputs, {});
  // The verdict of the good ledgers: rank 1 stopped outside NCCL, rank 0 waits for it. One rank
  // on each side: stuck or uneven steps, the step counts cannot tell which side is wrong.
  CHECK(d.verdict == Kind::IterationMismatch);
  CHECK(verdict_of(d).ambiguous);
  CHECK(verdict_of(d).waiting == std::vector<int>{0});
}

TEST_CASE("report inputs: hostile entries inside a valid header are skipped with warnings, not fatal") {
  Job job(1);
  steps(job[0], 0, 5);
  job.write();
  std::string path;
  for (const auto& entry : fs::directory_iterator(job.dir.path())) path = entry.path();
  std::string b = read_bytes(path);
  using namespace hangshim::ledger;
  const auto* h = reinterpret_cast<const Header*>(b.data());
  // Every ring entry names an out-of-range communicator; the call-site's string points outside
  // the pool; the counts claim more entries than the tables hold.
  for (uint32_t i = 0; i < 5; ++i) patch(b, h->ring_offset + i * sizeof(RingEntry) + offsetof(RingEntry, comm), uint32_t{1u << 30});
  patch(b, h->callsite_offset + sizeof(CallsiteEntry) + offsetof(CallsiteFrame, file), uint32_t{0x7fffffff});
  patch(b, offsetof(Header, comm_count), uint32_t{0xffffffff});
  patch(b, offsetof(Header, callsite_count), uint32_t{0xffffffff});
  write_bytes(path, b);
  Inputs inputs = load(job.dir.path());
  REQUIRE(inputs.errors.empty());
  REQUIRE(inputs.ranks.size() == 1);
  CHECK(inputs.ranks[0].records.empty());
  CHECK(inputs.ranks[0].warnings.size() >= 2);
}

TEST_CASE("report inputs: an earlier run's ledger of the same rank is set aside for the newest") {
  Job job(2);
  for (int r = 0; r < 2; ++r) steps(job[r], 0, 3);
  synth::Rank old = job[1];
  old.pid = 4242;
  old.start_ns = kStart - 3600'000'000'000ull;
  REQUIRE(synth::write(job.dir.path(), old));
  job.write();
  Inputs inputs = load(job.dir.path());
  REQUIRE(inputs.ranks.size() == 2);
  CHECK(inputs.ranks[1].header.pid != 4242);
  REQUIRE(inputs.warnings.size() == 1);
  CHECK(inputs.warnings[0].find("an older process") != std::string::npos);
}

TEST_CASE("report inputs: the only process of a job without RANK is its rank 0, two such processes are two jobs") {
  // ncclCommInitAll: one process makes every device's communicator and sets no RANK.
  ledger_test::TempDir dir;
  synth::Rank single = make_rank(0, 1);
  single.rank = -1;
  single.comms.clear();
  single.pid = 5001;
  REQUIRE(synth::write(dir.path(), single));
  Inputs one = load(dir.path());
  REQUIRE(one.ranks.size() == 1);
  CHECK(one.ranks[0].rank == 0);
  REQUIRE(one.warnings.size() == 1);
  CHECK(one.warnings[0].find("no RANK variable; read as the only process of its job (rank 0)") != std::string::npos);
  // A second rank-less process, started later, launched by nobody the first knows: another
  // job. The report is about the newest; the other is listed.
  single.pid = 5002;
  single.start_ns = kStart + 1000;
  REQUIRE(synth::write(dir.path(), single));
  Inputs two = load(dir.path());
  REQUIRE(two.ranks.size() == 1);
  CHECK(two.ranks[0].header.pid == 5002);
  CHECK(two.ranks[0].rank == 0);
  REQUIRE(two.other_jobs.size() == 1);
  CHECK(two.other_jobs[0].key.find(":5001:") != std::string::npos);
}

TEST_CASE("report inputs: an export carries its node's ledgers byte for byte") {
  Job job(4);
  for (int r = 0; r < 4; ++r) steps(job[r], 0, r == 2 ? 5 : 6, r != 2);
  job.write();
  ExportOptions options;
  options.dirs = {job.dir.path()};
  options.here = "node-b";
  options.now_ns = kStart + 1;
  ExportOutcome out = build_export(options);
  CHECK(out.ledgers == 4);
  CHECK(out.errors.empty());
  std::string file = job.dir.file("node-b.json");
  write_bytes(file, out.json);
  Inputs from_export;
  LoadOptions load_options;
  load_export_file(file, from_export, load_options);
  settle_inputs(from_export);
  Inputs from_dir = load(job.dir.path());  // the directory also holds node-b.json: the same ledgers twice
  REQUIRE(from_export.errors.empty());
  REQUIRE(from_export.ranks.size() == 4);
  for (size_t i = 0; i < 4; ++i) {
    CHECK(from_export.ranks[i].records.size() == from_dir.ranks[i].records.size());
    CHECK(from_export.ranks[i].comms[0].coll_issued == from_dir.ranks[i].comms[0].coll_issued);
    CHECK(from_export.ranks[i].observed_ns == kStart + 1);
  }
  CHECK(from_dir.warnings.size() == 4);  // each rank seen twice: "the same ledger"
  Diagnosis d = diagnose(from_export, {});
  CHECK(verdict_of(d).culprits == std::vector<int>{2});

  // A damaged export: one error for the file, nothing else.
  std::string text = out.json;
  text.resize(text.size() / 2);
  write_bytes(file, text);
  Inputs damaged;
  load_export_file(file, damaged, load_options);
  REQUIRE(damaged.errors.size() == 1);
  CHECK(damaged.errors[0].message.find("not valid JSON") != std::string::npos);
  write_bytes(file, "{\"format\": \"hangshim-export\", \"version\": 7}");
  Inputs foreign;
  load_export_file(file, foreign, load_options);
  REQUIRE(foreign.errors.size() == 1);
  CHECK(foreign.errors[0].message.find("export format version 7") != std::string::npos);
  write_bytes(file, "{\"format\": \"hangshim-export\", \"version\": 1, \"ledgers\": [{\"source\": \"x\", \"size\": 999999999999,"
                    " \"pages\": []}, {\"source\": \"y\", \"size\": 8192, \"pages\": [[8000, \"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"]]}]}");
  Inputs hostile;
  load_export_file(file, hostile, load_options);
  REQUIRE(hostile.errors.size() == 2);
  CHECK(hostile.errors[0].message.find("size missing or impossible") != std::string::npos);
  CHECK(hostile.errors[1].message.find("damaged ledger bytes") != std::string::npos);
}

TEST_CASE("report inputs: base64 decoding round-trips every length, skips zero runs only onto zeros, refuses damage") {
  using hangshim::report::base64_decode;
  using hangshim::report::base64_encode;
  std::vector<unsigned char> bytes(64);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i % 3 == 0 ? 0 : i * 37 + 11);
  std::fill(bytes.begin() + 20, bytes.begin() + 44, 0);  // a run of zeros: "AAAA..." in the text
  for (size_t n = 0; n <= bytes.size(); ++n) {
    std::string text = base64_encode(bytes.data(), n);
    for (bool zeroed : {false, true}) {
      std::vector<unsigned char> out(n + 3, zeroed ? 0 : 0xee);
      CHECK(base64_decode(text, out.data(), out.size(), zeroed) == static_cast<int64_t>(n));
      CHECK(std::equal(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n), out.begin()));
    }
    if (n > 0) {
      std::vector<unsigned char> small(n - 1);  // one byte too few
      CHECK(base64_decode(text, small.data(), small.size()) == -1);
    }
    for (size_t at = 0; at < text.size(); ++at) {
      for (char bad : {'*', '=', '\0', '\xff'}) {
        if (bad == '=' && at + 2 >= text.size()) continue;  // padding where padding may be
        std::string damaged = text;
        if (damaged[at] == bad) continue;
        damaged[at] = bad;
        std::vector<unsigned char> out(n + 3);
        CHECK(base64_decode(damaged, out.data(), out.size(), true) == -1);
      }
    }
  }
  std::vector<unsigned char> out(8);
  CHECK(base64_decode("QUJD=", out.data(), out.size()) == -1);  // not a multiple of 4
}

TEST_CASE("report inputs: base64 decoding of long runs (32 characters at a time where the CPU can) matches the bytes") {
  using hangshim::report::base64_decode;
  using hangshim::report::base64_encode;
  // A ledger's shape: stretches of varied bytes and of zeros, some 24 zero bytes on a block's
  // boundary (32 'A's, skipped onto zeroed memory), at every length to 1200.
  std::vector<unsigned char> bytes(1200);
  uint32_t state = 12345;
  for (size_t i = 0; i < bytes.size(); ++i) {
    state = state * 1103515245u + 12345u;
    bytes[i] = (i / 96) % 3 == 1 ? 0 : static_cast<unsigned char>(state >> 16);
  }
  for (size_t n = 0; n <= bytes.size(); n += n < 100 ? 1 : 7) {
    std::string text = base64_encode(bytes.data(), n);
    for (bool zeroed : {false, true}) {
      std::vector<unsigned char> out(n + 40, zeroed ? 0 : 0xee);
      REQUIRE(base64_decode(text, out.data(), n + 2, zeroed) == static_cast<int64_t>(n));
      CHECK(std::equal(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n), out.begin()));
      // Nothing written past the decoded bytes (another run's bytes may follow them).
      CHECK(std::all_of(out.begin() + static_cast<std::ptrdiff_t>(n), out.end(),
                        [&](unsigned char b) { return b == (zeroed ? 0 : 0xee); }));
    }
  }
  std::string text = base64_encode(bytes.data(), bytes.size());
  for (size_t at = 0; at + 4 < text.size(); at += 13) {
    std::string damaged = text;
    damaged[at] = at % 2 == 0 ? '-' : '=';
    std::vector<unsigned char> out(bytes.size());
    CHECK(base64_decode(damaged, out.data(), out.size(), true) == -1);
  }
}

namespace {

// Every field of every timing read back from a TimingHistory, against the timings given.
void check_history_round_trip(const std::vector<hangshim::report::CallTiming>& given) {
  hangshim::report::TimingHistory history;
  history.assign(given);
  REQUIRE(history.size() == given.size());
  size_t i = 0;
  for (const hangshim::report::CallTiming& t : history) {
    const auto& g = given[i++];
    CHECK(t.seq == g.seq);
    CHECK(t.issued_ns == g.issued_ns);
    CHECK(t.wait_us == g.wait_us);
    CHECK(t.comm == g.comm);
    CHECK(t.callsite == g.callsite);
    CHECK(t.op == g.op);
    CHECK(t.flags == g.flags);
  }
  CHECK(i == given.size());
  // each(): one communicator's calls of one op, picked by kind, in order and whole.
  for (uint32_t comm : {1u, 2u, 9u}) {
    auto keep = [comm](const hangshim::report::CallTiming& t) { return t.comm == comm && t.op != 2; };
    std::vector<hangshim::report::CallTiming> expected, picked;
    for (const auto& g : given) {
      if (keep(g)) expected.push_back(g);
    }
    history.each(keep, [&](const hangshim::report::CallTiming& t) { picked.push_back(t); });
    REQUIRE(picked.size() == expected.size());
    for (size_t k = 0; k < picked.size(); ++k) {
      CHECK(picked[k].seq == expected[k].seq);
      CHECK(picked[k].issued_ns == expected[k].issued_ns);
      CHECK(picked[k].wait_us == expected[k].wait_us);
      CHECK(picked[k].callsite == expected[k].callsite);
      CHECK(picked[k].flags == expected[k].flags);
    }
  }
}

}  // namespace

TEST_CASE("report inputs: encoded timings read back exactly (whole, or picked by kind), however far apart their values") {
  using hangshim::report::CallTiming;
  std::vector<CallTiming> usual;
  for (uint32_t k = 0; k < 128; ++k) {
    // Two communicators, life-cycle calls (seq 0) among collectives, issue times a second apart.
    usual.push_back({k % 7 == 0 ? 0 : 1000 + k, 1'700'000'000'000'000'000ull + uint64_t{k} * 1'000'000'007ull, 250 + k,
                     1 + k % 2, 3 + k % 3, static_cast<uint8_t>(1 + k % 4), static_cast<uint16_t>(k % 2 ? 0x10 : 0)});
  }
  check_history_round_trip(usual);
  check_history_round_trip({});
  {
    // What the encoding is for: calls a second apart in fewer bytes than the 16 of fixed widths.
    hangshim::report::TimingHistory history;
    history.assign(usual);
    CHECK(history.encoded_bytes() < 12 * usual.size());
    // A training step's calls: a few milliseconds apart, one communicator and call-site.
    std::vector<CallTiming> steps;
    for (uint32_t k = 0; k < 128; ++k) {
      steps.push_back({5000 + k, 1'700'000'000'000'000'000ull + uint64_t{k} * 3'100'017ull, 1200 + k % 50, 1, 1, 2, 0});
    }
    history.assign(steps);
    CHECK(history.encoded_bytes() <= 8 * steps.size() + 32);  // + its kind and first timing, whole
    check_history_round_trip(steps);
  }
  // Sequence numbers 2^32 apart, issue times 2^64 - 4 ns apart (and back), more than 256 kinds of call.
  std::vector<CallTiming> seq_far = usual;
  seq_far.back().seq = seq_far.front().seq + (uint64_t{1} << 32) + 5;
  check_history_round_trip(seq_far);
  std::vector<CallTiming> issued_far = usual;
  issued_far.front().issued_ns = 3;
  issued_far.back().issued_ns = UINT64_MAX;
  check_history_round_trip(issued_far);
  std::vector<CallTiming> many_kinds;
  for (uint32_t k = 0; k < 300; ++k) many_kinds.push_back({k + 1, uint64_t{k} * 10, k, 1, k + 1, 2, 0});
  check_history_round_trip(many_kinds);
  std::mt19937_64 rng(42);  // any values at all, in any order
  std::vector<CallTiming> any;
  for (uint32_t k = 0; k < 500; ++k) {
    any.push_back({rng(), rng(), static_cast<uint32_t>(rng()), static_cast<uint32_t>(rng() % 3), static_cast<uint32_t>(rng()),
                   static_cast<uint8_t>(rng()), static_cast<uint16_t>(rng())});
  }
  check_history_round_trip(any);
}

TEST_CASE("report inputs: a directory's files are read in the order people count them") {
  CHECK(natural_less("hangshim-r99999-n-1.ledger", "hangshim-r100000-n-1.ledger"));
  CHECK_FALSE(natural_less("hangshim-r100000-n-1.ledger", "hangshim-r99999-n-1.ledger"));
  CHECK(natural_less("node9.json", "node10.json"));
  CHECK(natural_less("hangshim-r00007-a-9.ledger", "hangshim-r00007-a-10.ledger"));
  CHECK(natural_less("hangshim-r00007-a-10.ledger", "hangshim-r00008-a-1.ledger"));
  CHECK(natural_less("7", "007"));  // equal values: fewer digits first
  CHECK(natural_less("a", "ab"));
  CHECK_FALSE(natural_less("x1", "x1"));
  // A strict weak order over names of letters, digits and dashes (std::sort needs one): never
  // less than itself, never both ways, and transitive, including its equivalence.
  std::mt19937 rng(11);
  const std::string alphabet = "0019a-";
  auto name = [&] {
    std::string s(rng() % 6, ' ');
    for (char& c : s) c = alphabet[rng() % alphabet.size()];
    return s;
  };
  std::vector<std::string> names(200);
  for (auto& n : names) n = name();
  for (const auto& a : names) {
    CHECK_FALSE(natural_less(a, a));
    for (const auto& b : names) {
      bool ab = natural_less(a, b), ba = natural_less(b, a);
      CHECK_FALSE((ab && ba));
      for (size_t k = 0; k < 8; ++k) {
        const std::string& c = names[rng() % names.size()];
        if (ab && natural_less(b, c)) CHECK(natural_less(a, c));
        if (!ab && !ba && !natural_less(b, c) && !natural_less(c, b)) CHECK((!natural_less(a, c) && !natural_less(c, a)));
      }
    }
  }
  // The ledgers of ranks 99996..100007 as a directory lists them: in rank order once sorted
  // (byte by byte, hangshim-r100000-... would come first).
  Job job(12);
  for (int r = 0; r < 12; ++r) job[r].rank = 99996 + r;
  job.write();
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(job.dir.path())) files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end(), natural_less);
  std::vector<int> ranks;
  for (const auto& f : files) ranks.push_back(std::stoi(f.substr(std::string("hangshim-r").size())));
  CHECK(std::is_sorted(ranks.begin(), ranks.end()));
}
