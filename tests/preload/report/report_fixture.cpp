// Test and benchmark fixtures for `hangshim report`, written with the real ledger writer:
//
//   report_fixture job DIR --ranks N [--nodes K] [--scenario stuck|healthy|finished|transport]
//                          [--collectives C] [--ring R] [--slurm-job ID]
//       a job of N ranks; with --nodes, DIR/node0 .. DIR/node{K-1} (hosts synth-node0 ...).
//       stuck: rank N/2 completed C-1 collectives and is outside NCCL, the others wait in #C.
//   report_fixture damage MODE IN OUT
//       a damaged copy of ledger IN: bad-magic, truncated, foreign-version, huge-counts,
//       overlapping-sections, hostile-entries (out-of-range indices, strings outside the pool).
#include <sys/stat.h>

#include <cstddef>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "ledger/format.h"
#include "synth_ledgers.h"

namespace {

int usage() {
  fmt::print(stderr,
             "usage: report_fixture job DIR --ranks N [--nodes K] [--scenario stuck|healthy|finished|transport] "
             "[--collectives C] [--ring R] [--slurm-job ID]\n"
             "       report_fixture damage MODE IN OUT\n");
  return 2;
}

uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

int make_job(int argc, char** argv) {
  if (argc < 3) return usage();
  std::string dir = argv[2];
  int ranks = 0, nodes = 1, collectives = 100;
  uint32_t ring = 128;
  std::string scenario = "stuck";
  std::string slurm_job;  // the SLURM job the ranks say they ran in (none: the job is named by its processes)
  for (int i = 3; i + 1 < argc; i += 2) {
    std::string_view opt = argv[i];
    std::string value = argv[i + 1];
    if (opt == "--ranks") ranks = std::stoi(value);
    else if (opt == "--nodes") nodes = std::stoi(value);
    else if (opt == "--collectives") collectives = std::stoi(value);
    else if (opt == "--ring") ring = static_cast<uint32_t>(std::stoul(value));
    else if (opt == "--scenario") scenario = value;
    else if (opt == "--slurm-job") slurm_job = value;
    else return usage();
  }
  if (ranks < 1 || nodes < 1 || collectives < 2 || (scenario != "stuck" && scenario != "healthy" && scenario != "finished" &&
                                                     scenario != "transport")) {
    return usage();
  }
  synth::Geometry g;
  g.ring = ring;
  g.comms = 4;
  g.callsites = 8;
  g.depth = 4;
  g.strings = 4096;
  uint64_t now = now_ns();
  int per_node = (ranks + nodes - 1) / nodes;
  for (int r = 0; r < ranks; ++r) {
    int node = r / per_node;
    std::string out = nodes > 1 ? fmt::format("{}/node{}", dir, node) : dir;
    ::mkdir(out.c_str(), 0700);
    synth::Rank rank;
    rank.rank = r;
    rank.world_size = ranks;
    rank.host = fmt::format("synth-node{}", node);
    rank.pid = 1000 + r % per_node;
    rank.slurm_job = slurm_job;
    rank.start_ns = now - 60'000'000'000ull;
    rank.heartbeat_ns = now;
    rank.comms.push_back({hangshim::ledger::KeyKind::UniqueId, hangshim::ledger::CommState::Active, 0x5eed5eed00000001ull, r, ranks, 0, 0, -1});
    rank.sites.push_back(synth::site("/job/train.py", "train", 88));
    bool stuck_here = scenario == "stuck" && r == ranks / 2;
    int n = stuck_here ? collectives - 1 : collectives;
    for (int i = 0; i < n; ++i) {
      synth::Call c;
      c.site = 0;
      c.complete = scenario == "healthy" || scenario == "finished" || stuck_here || i + 1 < n;
      rank.calls.push_back(c);
    }
    if (scenario == "finished") rank.state = hangshim::ledger::ProcessState::Exited;
    if (!synth::write(out, rank, g)) {
      fmt::print(stderr, "report_fixture: cannot write rank {} into {}\n", r, out);
      return 1;
    }
  }
  return 0;
}

int damage(int argc, char** argv) {
  using namespace hangshim::ledger;
  if (argc != 5) return usage();
  std::string mode = argv[2];
  std::ifstream in(argv[3], std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  std::string b = buffer.str();
  if (b.size() < kHeaderSize) return usage();
  Header h;
  std::memcpy(&h, b.data(), sizeof(h));
  auto put = [&](size_t offset, auto value) { std::memcpy(&b[offset], &value, sizeof(value)); };
  if (mode == "bad-magic") {
    b[0] = 'X';
  } else if (mode == "truncated") {
    b.resize(b.size() / 2);
  } else if (mode == "foreign-version") {
    put(offsetof(Header, version), uint32_t{kVersion + 1});
  } else if (mode == "huge-counts") {
    put(offsetof(Header, ring_capacity), uint32_t{1u << 31});
  } else if (mode == "overlapping-sections") {
    put(offsetof(Header, callsite_offset), h.ring_offset);
  } else if (mode == "hostile-entries") {
    for (uint32_t i = 0; i < h.ring_capacity; ++i) {
      put(h.ring_offset + i * sizeof(RingEntry) + offsetof(RingEntry, comm), uint32_t{1u << 30});
      put(h.ring_offset + i * sizeof(RingEntry) + offsetof(RingEntry, callsite), uint32_t{0xffffffff});
    }
    put(h.callsite_offset + sizeof(CallsiteEntry) + offsetof(CallsiteFrame, file), uint32_t{0x7fffffff});
    put(offsetof(Header, comm_count), uint32_t{0xffffffff});
    put(offsetof(Header, callsite_count), uint32_t{0xffffffff});
    put(offsetof(Header, ring_head), uint64_t{1} << 62);
    for (uint32_t i = 0; i < h.comm_capacity; ++i) put(h.comm_offset + i * sizeof(CommEntry) + offsetof(CommEntry, state), uint32_t{77});
    put(offsetof(Header, rank), int32_t{50});  // a rank of its own: it must not displace a real one
  } else {
    return usage();
  }
  std::ofstream out(argv[4], std::ios::binary);
  out << b;
  return out ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  std::string_view what = argv[1];
  if (what == "job") return make_job(argc, argv);
  if (what == "damage") return damage(argc, argv);
  return usage();
}
