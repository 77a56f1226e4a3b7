// Property test of the verdict: thousands of random job histories (world size, a sub-communicator
// or none, a wrapper of the job's own one or two levels deep or none, how many steps, which
// ranks stop where) written as real ledgers, each built from a cause the generator knows; the
// verdict's culprits must be that cause, and its headline must name it first and name the
// call-site through the job's own frames. Shapes:
//   stuck:   a minority of ranks stops outside NCCL before step k+1 (a stuck data loader); the
//            others wait for them, some inside the sub-communicator, the rest in the world
//            collective behind it: the cause is the stopped ranks, whatever the chain of waits;
//   uneven:  a few ranks (all in the sub-communicator, or all outside it) have one batch more:
//            they wait in call k+1 while everyone else left the loop after k: the cause is the
//            side whose step count differs; with as many ranks on each side, nobody can tell.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <random>

#include <fmt/ranges.h>

#include "report/analysis/rank_ranges.h"
#include "report_test_util.h"

using namespace report_test;

namespace {

constexpr uint64_t kWorldKey = 0x5eed000000000001ull;
constexpr uint64_t kSubKey = 0x5eed0000000000a1ull;
constexpr int kGradSite = 0, kLossSite = 1, kSubSite = 2;

enum class Shape { Stuck, Uneven };

struct Case {
  Shape shape = Shape::Stuck;
  int world = 2;
  int steps = 2;               // steps every rank completed
  int wrapper_depth = 0;       // 0: NCCL called from the loop; 1: Comm.all_reduce; 2: + reduce_tensor
  std::vector<int> sub;        // the sub-communicator's members (empty: none)
  std::vector<int> odd;        // stuck: the ranks that stop; uneven: the ranks with a batch more
  std::vector<int> culprits;   // the truth
  bool ambiguous = false;
  std::string text;            // the case in words, for a failure's message

  bool in_sub(int r) const { return std::find(sub.begin(), sub.end(), r) != sub.end(); }
  bool is_odd(int r) const { return std::find(odd.begin(), odd.end(), r) != odd.end(); }
};

// A call-site of train() at `line`, through the job's own helpers as deep as asked.
std::vector<synth::Frame> site_at(int line, int wrapper_depth) {
  std::vector<synth::Frame> frames = {{"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", "all_reduce", 2050, true}};
  if (wrapper_depth >= 1) frames.push_back({"/job/job.py", "Comm.all_reduce", 54, false});
  if (wrapper_depth >= 2) frames.push_back({"/job/utils.py", "reduce_tensor", 10, false});
  frames.push_back({"/job/job.py", "train", line, false});
  frames.push_back({"/job/job.py", "main", 200, false});
  return frames;
}

std::vector<int> pick(std::mt19937& rng, std::vector<int> from, size_t n) {
  std::shuffle(from.begin(), from.end(), rng);
  from.resize(n);
  std::sort(from.begin(), from.end());
  return from;
}

Case generate(uint32_t seed) {
  std::mt19937 rng(seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Case c;
  c.world = uniform(2, 8);
  c.shape = c.world >= 3 && uniform(0, 1) == 0 ? Shape::Stuck : Shape::Uneven;  // a minority needs 3 ranks
  c.steps = uniform(1, 4);
  c.wrapper_depth = uniform(0, 2);
  std::vector<int> all;
  for (int r = 0; r < c.world; ++r) all.push_back(r);
  if (c.world >= 3 && uniform(0, 1) == 1) c.sub = pick(rng, all, static_cast<size_t>(uniform(2, c.world - 1)));
  if (c.shape == Shape::Stuck) {
    // A minority stops (at least one rank, fewer than the others).
    c.odd = pick(rng, all, static_cast<size_t>(uniform(1, (c.world - 1) / 2)));
    c.culprits = c.odd;
    // When every rank that goes on waits in the sub-communicator, the ones they wait for are its
    // stopped members; a stopped rank nobody waits for yet looks like any rank between calls.
    bool sub_completes = std::none_of(c.sub.begin(), c.sub.end(), [&](int r) { return c.is_odd(r); });
    bool someone_in_world = std::any_of(all.begin(), all.end(), [&](int r) {
      return !c.is_odd(r) && !(c.in_sub(r) && !sub_completes);
    });
    if (!someone_in_world) std::erase_if(c.culprits, [&](int r) { return !c.in_sub(r); });
  } else {
    // The ranks with a batch more: all inside the sub-communicator or all outside it, at most half.
    std::vector<int> pool = all;
    if (!c.sub.empty()) {
      bool inside = uniform(0, 1) == 1 || c.sub.size() == all.size();
      pool.clear();
      for (int r : all) {
        if (c.in_sub(r) == inside) pool.push_back(r);
      }
    }
    size_t most = std::min(pool.size(), static_cast<size_t>(c.world / 2));
    c.odd = pick(rng, pool, static_cast<size_t>(uniform(1, static_cast<int>(most))));
    c.ambiguous = 2 * c.odd.size() == static_cast<size_t>(c.world);
    c.culprits = c.ambiguous ? all : c.odd;
  }
  c.text = fmt::format("seed {}: {} ranks, {} steps, wrapper depth {}, sub-communicator [{}], {} [{}]", seed, c.world,
                       c.steps, c.wrapper_depth, fmt::join(c.sub, ","), c.shape == Shape::Stuck ? "stopped" : "one batch more",
                       fmt::join(c.odd, ","));
  return c;
}

synth::Rank rank_of(const Case& c, int r) {
  synth::Rank rank;
  rank.rank = r;
  rank.world_size = c.world;
  rank.start_ns = kStart;
  rank.comms.push_back({hangshim::ledger::KeyKind::UniqueId, hangshim::ledger::CommState::Active, kWorldKey, r, c.world, 0, 0, -1});
  if (c.in_sub(r)) {
    int sub_rank = static_cast<int>(std::find(c.sub.begin(), c.sub.end(), r) - c.sub.begin());
    rank.comms.push_back({hangshim::ledger::KeyKind::Split, hangshim::ledger::CommState::Active, kSubKey, sub_rank,
                          static_cast<int>(c.sub.size()), kWorldKey, 0, 1});
  }
  rank.sites = {site_at(78, c.wrapper_depth), site_at(85, c.wrapper_depth), site_at(80, c.wrapper_depth)};
  auto goes_on = [&](int rank_id) { return c.shape == Shape::Stuck ? !c.is_odd(rank_id) : c.is_odd(rank_id); };
  // Step k+1's sub-communicator collective completes when every member goes on to it.
  bool sub_completes = std::all_of(c.sub.begin(), c.sub.end(), goes_on);
  steps(rank, kLossSite, 1);  // a collective from another line of the loop function, before the loop
  for (int i = 0; i < c.steps; ++i) {
    if (c.in_sub(r)) steps(rank, kSubSite, 1, false, 1);
    steps(rank, kGradSite, 1, false, 0);
  }
  if (!goes_on(r)) return rank;  // stopped (stuck, or out of the loop) outside NCCL
  if (c.in_sub(r) && !sub_completes) {
    steps(rank, kSubSite, 1, true, 1);  // waits for the members that do not come
    return rank;
  }
  if (c.in_sub(r)) steps(rank, kSubSite, 1, false, 1);
  steps(rank, kGradSite, 1, true, 0);  // waits in the world collective of step k+1
  return rank;
}

Diagnosis diagnose_case(const Case& c, const std::string& dir) {
  synth::Geometry small;
  small.ring = 64;
  small.callsites = 8;
  small.strings = 4096;
  for (int r = 0; r < c.world; ++r) REQUIRE(synth::write(dir, rank_of(c, r), small));
  Inputs inputs;
  LoadOptions load;
  load.here = "the-test-host";  // not synth-node: liveness is not judged, no stacks
  load.now_ns = kStart + 5'000'000'000ull;
  inputs.now_ns = load.now_ns;
  load_path(dir, inputs, load);
  settle_inputs(inputs);
  return hangshim::report::diagnose(inputs, {});
}

// Thousands of small ledgers: in memory (/dev/shm) where there is one, else under /tmp.
class ShmDir {
 public:
  ShmDir() {
    char shm[] = "/dev/shm/hangshim-property-XXXXXX";
    char tmp[] = "/tmp/hangshim-property-XXXXXX";
    const char* made = mkdtemp(shm);
    if (made == nullptr) made = mkdtemp(tmp);
    path_ = made != nullptr ? made : "";
  }
  ~ShmDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("report property: the verdict's culprits are the generated cause over thousands of random jobs") {
  constexpr uint32_t kCases = 2000;
  size_t by_shape[2] = {0, 0}, ambiguous = 0, chained = 0;
  for (uint32_t seed = 1; seed <= kCases; ++seed) {
    Case c = generate(seed);
    ShmDir dir;
    Diagnosis d = diagnose_case(c, dir.path());
    INFO(c.text);
    REQUIRE(d.primary >= 0);
    const Finding& f = d.findings[static_cast<size_t>(d.primary)];
    std::string line = verdict_line(d);
    INFO(line);
    CHECK(f.culprits == c.culprits);
    CHECK(f.ambiguous == c.ambiguous);
    if (c.ambiguous) {
      CHECK(contains(line, "HANG: cannot tell which side is wrong"));
    } else if (c.shape == Shape::Stuck) {
      CHECK(f.kind == Kind::StuckOutsideNccl);
      CHECK(line.rfind("HANG: " + ranks_phrase(c.culprits) + " never issued", 0) == 0);
    } else {
      CHECK(f.kind == Kind::IterationMismatch);
      CHECK(line.rfind("HANG: " + ranks_phrase(c.culprits) + " ran one more iteration of", 0) == 0);
    }
    // The call-site through the job's own frames: the loop line first, then its helpers.
    if (c.wrapper_depth == 0) {
      CHECK_FALSE(contains(line, " -> "));
    } else {
      CHECK(contains(line, c.wrapper_depth == 1 ? "(job.py:" : "-> reduce_tensor (utils.py:10) -> "));
      CHECK(contains(line, "train (job.py:"));
      CHECK(contains(line, "-> Comm.all_reduce (job.py:54)"));
    }
    CHECK_FALSE(contains(line, "distributed_c10d"));
    ++by_shape[c.shape == Shape::Stuck ? 0 : 1];
    ambiguous += c.ambiguous ? 1 : 0;
    chained += f.chain.empty() ? 0 : 1;
  }
  // The generator reached every shape, ties and chains of waits included.
  CHECK(by_shape[0] > kCases / 4);
  CHECK(by_shape[1] > kCases / 4);
  CHECK(ambiguous > 20);
  CHECK(chained > 20);
}
