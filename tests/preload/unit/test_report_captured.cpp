// Calls captured into a CUDA graph (kRecordCaptured): the report says where each was captured and
// that the graph's replays, which never call NCCL, are beyond the ledger; and no captured call
// counts as pending, whatever its record says.
#include <doctest/doctest.h>

#include "report/wording/aborted_words.h"
#include "report/wording/render.h"
#include "report_test_util.h"

using namespace report_test;

namespace {

// One all_reduce captured at train.py:91 (site 3), `pending`: its record never completed.
void capture(synth::Rank& r, bool pending) {
  synth::Call c;
  c.site = 3;
  c.captured = true;
  c.complete = !pending;
  r.calls.push_back(c);
}

}  // namespace

TEST_CASE("report: a call captured into a CUDA graph is named, and is never a hang") {
  for (bool pending : {false, true}) {
    CAPTURE(pending);
    Job job(2);
    for (int r = 0; r < 2; ++r) {
      steps(job[r], 0, 3);
      capture(job[r], pending);
    }
    Diagnosis d = job.diagnose();
    CHECK_FALSE(d.problem);
    CHECK(d.verdict == Kind::Healthy);
    REQUIRE(d.comms.size() == 1);
    REQUIRE(d.comms[0].captured.size() == 1);
    const CapturedCall& c = d.comms[0].captured[0];
    CHECK(c.ranks == std::vector<int>{0, 1});
    CHECK(c.op == "all_reduce");
    REQUIRE(c.site);
    CHECK(c.site->line == 91);
    CHECK(c.records == 2);
    auto lines = captured_lines(d);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].find("ranks 0-1's all_reduce on world at train.py:91 was captured into a CUDA graph") != std::string::npos);
    CHECK(lines[0].find("without calling NCCL") != std::string::npos);
    std::string text = render_report_text(d, {});
    CHECK(text.find(lines[0]) != std::string::npos);
    std::string json = render_report_json(d);
    CHECK(json.find("\"cuda_graph_captures\"") != std::string::npos);
    CHECK(render_report_html(d).find("captured into a CUDA graph") != std::string::npos);
  }
}

TEST_CASE("report: a capture does not hide a real hang after it") {
  // The same job with the call captured and with it issued plainly: the same verdict.
  auto build = [](bool captured) {
    Job job(3);
    for (int r = 0; r < 3; ++r) {
      steps(job[r], 0, 3);
      capture(job[r], false);  // done at its return, as the shim records a capture
      job[r].calls.back().captured = captured;
      if (r != 1) steps(job[r], 0, 1, true);  // ranks 0 and 2 wait in #5; rank 1 never issues it
    }
    return job;
  };
  Job plain = build(false);
  Diagnosis want = plain.diagnose();
  Job job = build(true);
  Diagnosis d = job.diagnose();
  REQUIRE(want.problem);
  REQUIRE(d.problem);
  const Finding& f = verdict_of(d);
  CHECK(f.kind == verdict_of(want).kind);
  CHECK(f.seq == 5);
  CHECK(f.culprits == verdict_of(want).culprits);
  CHECK(f.culprits == std::vector<int>{1});
  CHECK(d.comms[0].captured.size() == 1);
}

TEST_CASE("report: no capture, no CUDA graph words") {
  Job job(2);
  for (int r = 0; r < 2; ++r) steps(job[r], 0, 3);
  Diagnosis d = job.diagnose();
  CHECK(d.comms[0].captured.empty());
  CHECK(captured_lines(d).empty());
  CHECK(render_report_text(d, {}).find("CUDA graph") == std::string::npos);
}
