// Classifier: every rank issued collective #k, from different lines.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "report_test_util.h"

using namespace report_test;

namespace {

// The synthetic job's train.py as a real file: the step loop holds the gradient all_reduce (88),
// a collective only rank 0 issues (91) and a broadcast (93); the epoch-end all_reduce (95) comes
// after the step loop; the barrier (99) after both. The evidence that tells one more iteration
// from an extra collective is read from it.
struct TrainSource {
  ledger_test::TempDir dir;
  std::string path = dir.path() + "/train.py";
  TrainSource() {
    std::ofstream out(path);
    for (int line = 1; line < 85; ++line) out << "#\n";
    out << "def train(loader):\n"                          // 85
        << "    for epoch in range(2):\n"                   // 86
        << "        for step, batch in enumerate(loader):\n"  // 87
        << "            all_reduce(grad)\n"                 // 88
        << "            if rank == 0:\n"                    // 89
        << "                log()\n"                        // 90
        << "                all_reduce(extra)\n"            // 91
        << "            if swapped:\n"                      // 92
        << "                broadcast(params)\n"            // 93
        << "        # the epoch's end\n"                    // 94
        << "        all_reduce(epoch_loss)\n"               // 95
        << "    save()\n"                                   // 96
        << "    save()\n"                                   // 97
        << "    save()\n"                                   // 98
        << "    barrier()\n";                               // 99
  }
  // Points every rank's train.py frames at this file.
  void use_in(Job& job) const {
    for (auto& rank : job.ranks) {
      for (auto& site : rank.sites) {
        for (auto& frame : site) {
          if (frame.file == "/job/train.py") frame.file = path;
        }
      }
    }
  }
};

}  // namespace

TEST_CASE("report: one more loop iteration on one rank (the uneven-data story)") {
  TrainSource source;
  for (int world : {2, 4, 8}) {
    Job job(world);
    source.use_in(job);
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
    CHECK(f.reason.find("outside the loop around it") != std::string::npos);
  }
}

TEST_CASE("report: a collective behind rank-dependent control flow inside the loop is an extra collective, not "
          "uneven steps") {
  TrainSource source;
  for (int world : {2, 4}) {
    Job job(world);
    source.use_in(job);
    for (int r = 0; r < world; ++r) {
      steps(job[r], 0, 3);                   // three steps of train.py:88 everywhere
      if (r == 0) steps(job[r], 3, 1, true);  // rank 0 then issues train.py:91 (inside the step loop)
      if (r != 0) steps(job[r], 0, 1, true);  // the others are in their fourth train.py:88
    }
    Diagnosis d = job.diagnose();
    const Finding& f = verdict_of(d);
    CHECK(f.kind == Kind::ExtraCollective);
    CHECK(f.culprits == std::vector<int>{0});
    CHECK(f.seq == 4);
    CHECK_FALSE(f.ambiguous);
    CHECK(f.reason.find("inside the same loop") != std::string::npos);
    CHECK(verdict_line(d).find("rank 0 issued an extra all_reduce #4") != std::string::npos);
  }
}

TEST_CASE("report: a broadcast where the others all_reduce, in the same loop, is an op mismatch when the others "
          "broadcast in that loop too (a swapped order), else an extra collective") {
  TrainSource source;
  for (bool others_broadcast : {true, false}) {
    Job job(3);
    source.use_in(job);
    for (int r = 0; r < 3; ++r) {
      for (int step = 0; step < 2; ++step) {
        steps(job[r], 0, 1);
        if (others_broadcast) {
          steps(job[r], 4, 1);  // train.py:93 after the gradient all_reduce, every step
          job[r].calls.back().op = Op::Broadcast;
        }
      }
      steps(job[r], r == 2 ? 4 : 0, 1, true);  // rank 2 broadcasts (train.py:93) first
      if (r == 2) job[r].calls.back().op = Op::Broadcast;
    }
    Diagnosis d = job.diagnose();
    const Finding& f = verdict_of(d);
    CHECK(f.kind == (others_broadcast ? Kind::OpMismatch : Kind::ExtraCollective));
    CHECK(f.culprits == std::vector<int>{2});
    CHECK(f.seq == (others_broadcast ? 5u : 3u));
  }
}

TEST_CASE("report: without the source, one call short of the others' line cannot tell its two readings apart") {
  Job job(4);  // /job/train.py does not exist here
  for (int r = 0; r < 4; ++r) {
    steps(job[r], 0, r == 0 ? 4 : 3, r == 0);
    if (r != 0) steps(job[r], 1, 1, true);
  }
  Diagnosis d = job.diagnose();
  const Finding& f = verdict_of(d);
  CHECK(f.ambiguous);
  CHECK(f.culprits == std::vector<int>{0, 1, 2, 3});
  std::string line = verdict_line(d);
  CHECK(line.find("cannot tell") != std::string::npos);
  CHECK(line.find("either rank 0 ran one more iteration, or ranks 1-3 issued an extra collective") != std::string::npos);
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
