// Classifier: the same line, different arguments at collective #k.
#include <doctest/doctest.h>

#include "report_test_util.h"

using namespace report_test;

TEST_CASE("report: a count that changed on one rank names that rank, even among two") {
  for (int world : {2, 4}) {
    Job job(world);
    for (int r = 0; r < world; ++r) {
      steps(job[r], 0, 3, true);
      if (r == world - 1) job[r].calls.back().count = 12;  // lost an unused parameter at iteration 3
    }
    Diagnosis d = job.diagnose();
    const Finding& f = verdict_of(d);
    CHECK(f.kind == Kind::CountMismatch);
    CHECK(f.culprits == std::vector<int>{world - 1});
    CHECK(f.attribute == "count");
    CHECK(f.reason.find("used count 16 at this line before") != std::string::npos);
    CHECK(verdict_line(d).find("with 12 elements") != std::string::npos);
  }
}

TEST_CASE("report: dtype, reduce op and op mismatches") {
  // Each case: four ranks pending in the same all_reduce, one of them passing something else.
  const struct {
    Kind kind;
    int culprit;
    void (*change)(synth::Call&);
  } cases[] = {
      {Kind::DtypeMismatch, 1, [](synth::Call& c) { c.dtype = 6; }},  // float16
      {Kind::ReduceOpMismatch, 2, [](synth::Call& c) { c.red_op = 2; }},  // max
      {Kind::OpMismatch, 3, [](synth::Call& c) { c.op = Op::AllGather; }},
  };
  for (const auto& c : cases) {
    const char* kind = kind_name(c.kind);
    CAPTURE(kind);
    Job job(4);
    for (int r = 0; r < 4; ++r) steps(job[r], 0, 2, true);
    c.change(job[c.culprit].calls.back());
    Diagnosis d = job.diagnose();
    CHECK(verdict_of(d).kind == c.kind);
    CHECK(verdict_of(d).culprits == std::vector<int>{c.culprit});
  }
}

TEST_CASE("report: a root mismatch without history: the majority, or on a tie the lowest rank, is the reference") {
  for (int world : {2, 3, 8}) {
    Job job(world);
    for (int r = 0; r < world; ++r) {
      steps(job[r], 0, 2);
      synth::Call b;
      b.op = Op::Broadcast;
      b.site = 4;
      b.peer = r == world - 1 ? 1 : 0;
      b.red_op = -1;
      b.complete = false;
      job[r].calls.push_back(b);
    }
    Diagnosis d = job.diagnose();
    const Finding& f = verdict_of(d);
    CHECK(f.kind == Kind::RootMismatch);
    CHECK(f.culprits == std::vector<int>{world - 1});
    CHECK(f.seq == 3);
  }
}
