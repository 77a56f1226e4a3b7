// Classifier: every rank issued collective #k, from different lines.
#include <doctest/doctest.h>

#include "report_test_util.h"

using namespace report_test;

TEST_CASE("report: one more loop iteration on one rank (the uneven-data story)") {
  for (int world : {2, 4, 8}) {
    Job job(world);
    for (int r = 0; r < world; ++r) {
      steps(job[r], 0, r == 0 ? 4 : 3, r == 0);  // rank 0's loader has one batch more
      if (r != 0) steps(job[r], 1, 1, true);      // the others went on to the epoch-end all_reduce
    }
    Diagnosis d = job.diagnose();
    const Finding& f = verdict_of(d);
    CHECK(f.kind == Kind::IterationMismatch);
    CHECK(f.culprits == std::vector<int>{0});
    CHECK(f.seq == 4);
    CHECK(f.others_ran == 3);
    std::string line = verdict_line(d);
    CHECK(line.find("rank 0 ran one more iteration of train.py:88") != std::string::npos);
    CHECK(line.find("at train.py:95 (iteration 1)") != std::string::npos);
    REQUIRE_FALSE(d.hints.empty());
    CHECK(d.hints[0].find("DistributedSampler(dataset, drop_last=True)") != std::string::npos);
    CHECK(d.hints[0].find("set_epoch") != std::string::npos);
  }
}

TEST_CASE("report: a barrier some ranks never entered") {
  Job job(4);
  for (int r = 0; r < 4; ++r) {
    steps(job[r], 0, 2);
    if (r == 0) {
      steps(job[r], 0, 1, true);  // rank 0 skipped the barrier, is in its next all_reduce
    } else {
      steps(job[r], 2, 1, true);
    }
  }
  Diagnosis d = job.diagnose();
  const Finding& f = verdict_of(d);
  CHECK(f.kind == Kind::MissingRank);
  CHECK(f.op == "barrier");
  CHECK(f.culprits == std::vector<int>{0});
  CHECK(f.waiting == std::vector<int>{1, 2, 3});
  CHECK(verdict_line(d).find("rank 0 never entered barrier #3") != std::string::npos);
}

TEST_CASE("report: an extra collective on one rank, on a tie the line the others passed by is the extra one") {
  for (int world : {2, 4}) {
    Job job(world);
    for (int r = 0; r < world; ++r) {
      steps(job[r], 0, 2);
      steps(job[r], r == 0 ? 3 : 1, 1, true);  // rank 0: train.py:91 (extra), others: train.py:95
    }
    Diagnosis d = job.diagnose();
    const Finding& f = verdict_of(d);
    CHECK(f.kind == Kind::ExtraCollective);
    CHECK(f.culprits == std::vector<int>{0});
    CHECK(f.seq == 3);
    CHECK(verdict_line(d).find("rank 0 issued an extra all_reduce #3") != std::string::npos);
  }
}
