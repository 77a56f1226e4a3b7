// Classifier: everything agrees and nobody completes; NCCL errors; ledgers that are missing.
#include <doctest/doctest.h>

#include "report_test_util.h"

using namespace report_test;

TEST_CASE("report: every rank issued #k, none completed it: transport") {
  Job job(4);
  for (int r = 0; r < 4; ++r) steps(job[r], 0, 7, true);
  Diagnosis d = job.diagnose();
  const Finding& f = verdict_of(d);
  CHECK(f.kind == Kind::Transport);
  CHECK(f.culprits.empty());
  CHECK(f.waiting == std::vector<int>{0, 1, 2, 3});
  CHECK(verdict_line(d).find("every rank of comm world (4 ranks) issued all_reduce #7") != std::string::npos);
  REQUIRE_FALSE(d.hints.empty());
  CHECK(d.hints[0].find("NCCL_DEBUG=INFO") != std::string::npos);
  CHECK(d.hints[0].find("NCCL_SOCKET_IFNAME") != std::string::npos);
  CHECK(d.hints[0].find("CUDA_VISIBLE_DEVICES") != std::string::npos);
}

TEST_CASE("report: an NCCL error on one rank") {
  Job job(4);
  for (int r = 0; r < 4; ++r) steps(job[r], 0, 3, true);
  job[2].calls.back().result = 6;  // ncclRemoteError
  Diagnosis d = job.diagnose();
  const Finding& f = verdict_of(d);
  CHECK(f.kind == Kind::NcclError);
  CHECK(f.culprits == std::vector<int>{2});
  CHECK(verdict_line(d).find("ncclRemoteError") != std::string::npos);
}

TEST_CASE("report: ranks without a ledger are not blamed on the transport") {
  Job job(8);
  job.ranks.resize(6);  // ranks 6 and 7: another node, not collected
  for (int r = 0; r < 6; ++r) steps(job[r], 0, 5, true);
  Diagnosis d = job.diagnose();
  const Finding& f = verdict_of(d);
  CHECK(f.kind == Kind::MissingLedgers);
  CHECK(d.comms[0].absent == std::vector<int>{6, 7});
  CHECK(verdict_line(d).find("its rank(s) 6-7 have no ledger here") != std::string::npos);
}

TEST_CASE("report: healthy runs raise no alarm") {
  Job running(4);
  for (int r = 0; r < 4; ++r) steps(running[r], 0, 10);
  Diagnosis d = running.diagnose();
  CHECK_FALSE(d.problem);
  CHECK(d.verdict == Kind::Healthy);
  CHECK(verdict_line(d).rfind("NO HANG IN NCCL", 0) == 0);

  Job finished(4);
  for (int r = 0; r < 4; ++r) {
    steps(finished[r], 0, 10);
    finished[r].state = hangshim::ledger::ProcessState::Exited;
  }
  // The last collective of a rank that exited before its completion was seen: the others'
  // completion of it counts.
  finished[1].calls.back().complete = false;
  Diagnosis e = finished.diagnose();
  CHECK_FALSE(e.problem);
  CHECK(verdict_line(e).rfind("OK: all 4 ranks finished", 0) == 0);
}

TEST_CASE("report: ranks waiting in communicator init for ranks that never called NCCL") {
  Job job(4);
  job.ranks.resize(2);  // ranks 2 and 3 never reached init_process_group: no ledger
  for (int r = 0; r < 2; ++r) {
    job[r].comms[0].state = hangshim::ledger::CommState::Initializing;
    synth::Call init;
    init.op = Op::CommInitRank;
    init.site = 0;
    init.complete = false;
    job[r].calls.push_back(init);
  }
  Diagnosis d = job.diagnose();
  const Finding& f = verdict_of(d);
  CHECK(f.kind == Kind::InitHang);
  CHECK(f.culprits == std::vector<int>{2, 3});
  CHECK(f.waiting == std::vector<int>{0, 1});
  CHECK(verdict_line(d).find("ranks 2-3 never joined comm world (4 ranks); ranks 0-1 wait in comm_init_rank at train.py:88") !=
        std::string::npos);
}
