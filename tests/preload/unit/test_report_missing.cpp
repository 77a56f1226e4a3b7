// Classifier: ranks that never issued collective #k, and where they are instead.
#include <doctest/doctest.h>

#include "report_test_util.h"

using namespace report_test;

TEST_CASE("report: a rank outside NCCL is named with the collective it never issued") {
  Job job(8);
  for (int r = 0; r < 8; ++r) steps(job[r], 0, r == 3 ? 1004 % 64 : 1005 % 64, r != 3);
  Diagnosis d = job.diagnose();
  REQUIRE(d.problem);
  const Finding& f = verdict_of(d);
  CHECK(f.kind == Kind::StuckOutsideNccl);
  CHECK(f.culprits == std::vector<int>{3});
  CHECK(f.waiting == std::vector<int>{0, 1, 2, 4, 5, 6, 7});
  CHECK(f.seq == 1005 % 64);
  CHECK(f.op == "all_reduce");
  std::string line = verdict_line(d);
  CHECK(line.find("rank 3 never issued all_reduce #45 on comm world (8 ranks)") != std::string::npos);
  CHECK(line.find("ranks 0-2,4-7 wait in it at train.py:88 (iteration 45)") != std::string::npos);
  CHECK(line.find("rank 3 is outside NCCL since all_reduce #44 at train.py:88 (iteration 44)") != std::string::npos);
  CHECK(situation(d, 3).state == RankState::OutsideNccl);
  CHECK(situation(d, 0).current->iteration == 45);
  REQUIRE(d.groups.size() == 2);  // ranks 0-2,4-7 merged
}

TEST_CASE("report: a rank that exited while the others wait for it") {
  Job job(4);
  for (int r = 0; r < 4; ++r) steps(job[r], 0, r == 2 ? 5 : 6, r != 2);
  job[2].state = hangshim::ledger::ProcessState::Exited;
  Diagnosis d = job.diagnose();
  const Finding& f = verdict_of(d);
  CHECK(f.kind == Kind::RankExited);
  CHECK(f.culprits == std::vector<int>{2});
  CHECK(f.seq == 6);
  CHECK(verdict_line(d).find("rank 2 exited after all_reduce #5 at train.py:88 (iteration 5)") != std::string::npos);
}

TEST_CASE("report: a rank whose heartbeat stopped before the others' is dead") {
  Job job(4);
  for (int r = 0; r < 4; ++r) {
    steps(job[r], 0, r == 1 ? 3 : 4, r != 1);
    job[r].heartbeat_ns = kStart + 5'000'000'000ull;
  }
  job[1].heartbeat_ns = kStart + 1'000'000'000ull;  // 4 s before the others: more than the timeout below
  DiagnoseOptions options;
  options.heartbeat_timeout_ns = 2'000'000'000ull;
  Diagnosis d = job.diagnose(options);
  const Finding& f = verdict_of(d);
  CHECK(f.kind == Kind::HeartbeatLost);
  CHECK(f.culprits == std::vector<int>{1});
  CHECK(situation(d, 1).state == RankState::Dead);
  // All heartbeats old (a copy of the ledgers taken long ago) is not death: the others are not
  // judged by the report's clock but by the newest heartbeat.
  CHECK(situation(d, 0).state == RankState::InCollective);
}

TEST_CASE("report: a cycle of waits between a sub-group and the world blames the sub-group") {
  // Ranks 0-3 form a split of the world; rank 3 skips the split's all_reduce #2 and goes on to
  // the world's all_reduce #2, which ranks 0-2 never reach.
  Job job(8);
  for (int r = 0; r < 8; ++r) {
    synth::Rank& rank = job[r];
    bool member = r < 4;
    if (member) {
      rank.comms.push_back({hangshim::ledger::KeyKind::Split, hangshim::ledger::CommState::Active, 0x5eed0000000000aaull, r, 4, 0x5eed000000000001ull, 0, 0});
    }
    for (int step = 1; step <= 2; ++step) {
      bool skip = r == 3 && step == 2;
      if (member && !skip) {
        synth::Call c;
        c.comm = 1;
        c.site = 3;
        c.complete = step == 1;
        rank.calls.push_back(c);
        if (step == 2) break;  // ranks 0-2 wait here
      }
      synth::Call w;
      w.site = 0;
      w.complete = step == 1;
      rank.calls.push_back(w);
    }
  }
  Diagnosis d = job.diagnose();
  const Finding& f = verdict_of(d);
  CHECK(f.kind == Kind::SubgroupHang);
  CHECK(f.culprits == std::vector<int>{3});
  CHECK(f.waiting == std::vector<int>{0, 1, 2});
  CHECK(f.seq == 2);
  CHECK(d.comms[static_cast<size_t>(f.comm)].name == "world/split1");
  CHECK(d.comms[static_cast<size_t>(f.comm)].ranks == std::vector<int>{0, 1, 2, 3});
  REQUIRE(d.findings.size() == 2);
  const Finding& world = d.findings[d.primary == 0 ? 1 : 0];
  CHECK_FALSE(world.root_cause);
  CHECK(world.blocked_by == d.primary);
  CHECK(verdict_line(d).find("rank 3 is in all_reduce #2 on world at train.py:88 (iteration 2)") != std::string::npos);
}
