// Helpers for the report unit tests: a job of synthetic ranks (tests/preload/report/synth_ledgers.h,
// written by the real ledger writer) in a private directory, read and diagnosed the way
// `hangshim report DIR` does it (without live stacks: the ranks are not processes here).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "../report/synth_ledgers.h"
#include "ledger_test_util.h"
#include "report/diagnose.h"
#include "report/inputs/liveness.h"
#include "report/inputs/load_inputs.h"
#include "report/wording/phrases.h"

namespace report_test {

using namespace hangshim::report;
using hangshim::ledger::Op;

constexpr uint64_t kStart = 1700000000000000000ull;

// Sites every synthetic rank has: 0 the training step's all_reduce (train.py:88), 1 the
// epoch-end all_reduce (train.py:95), 2 a barrier (train.py:99), 3 another all_reduce
// (train.py:91), 4 a broadcast (train.py:93).
inline synth::Rank make_rank(int rank, int world) {
  synth::Rank r;
  r.rank = rank;
  r.world_size = world;
  r.host = "synth-node";
  r.start_ns = kStart;
  r.comms.push_back({hangshim::ledger::KeyKind::UniqueId, hangshim::ledger::CommState::Active, 0x5eed000000000001ull, rank, world, 0, 0, -1});
  r.sites.push_back(synth::site("/job/train.py", "train", 88));
  r.sites.push_back(synth::site("/job/train.py", "train", 95));
  auto barrier = synth::site("/job/train.py", "train", 99, "barrier");
  barrier[0].function = "barrier";
  r.sites.push_back(barrier);
  r.sites.push_back(synth::site("/job/train.py", "train", 91));
  r.sites.push_back(synth::site("/job/train.py", "train", 93, "broadcast"));
  return r;
}

// `n` collectives from `site` on communicator `comm`; the last one left pending when asked.
inline void steps(synth::Rank& r, int site, int n, bool last_pending = false, int comm = 0) {
  for (int i = 0; i < n; ++i) {
    synth::Call c;
    c.comm = comm;
    c.site = site;
    c.complete = !(last_pending && i == n - 1);
    c.barrier = site == 2;
    if (c.barrier) c.count = 1;
    r.calls.push_back(c);
  }
}

class Job {
 public:
  explicit Job(int world) {
    for (int i = 0; i < world; ++i) ranks.push_back(make_rank(i, world));
  }
  std::vector<synth::Rank> ranks;
  ledger_test::TempDir dir;

  synth::Rank& operator[](int rank) { return ranks[static_cast<size_t>(rank)]; }

  void write() {
    for (const auto& r : ranks) REQUIRE(synth::write(dir.path(), r));
  }

  Diagnosis diagnose(DiagnoseOptions options = {}) {
    write();
    Inputs inputs;
    LoadOptions load;
    load.here = "the-test-host";  // not synth-node: liveness is not judged here
    load.now_ns = kStart + 5'000'000'000ull;
    inputs.now_ns = load.now_ns;
    load_path(dir.path(), inputs, load);
    settle_inputs(inputs);
    errors = inputs.errors;
    return hangshim::report::diagnose(inputs, options);
  }
  std::vector<InputError> errors;
};

inline const Finding& verdict_of(const Diagnosis& d) {
  REQUIRE(d.primary >= 0);
  return d.findings[static_cast<size_t>(d.primary)];
}

inline const RankSituation& situation(const Diagnosis& d, int rank) {
  auto it = std::find_if(d.situations.begin(), d.situations.end(), [&](const RankSituation& s) { return s.rank == rank; });
  REQUIRE(it != d.situations.end());
  return *it;
}

}  // namespace report_test
