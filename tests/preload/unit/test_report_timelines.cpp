// The HTML report's timelines (report/analysis/timelines.cpp) on synthetic jobs: each member's
// newest collectives as the ledgers hold them, who never issued one, values that differ from
// the others', and members with the same marks sharing a row.
#include <doctest/doctest.h>

#include "report/wording/render.h"
#include "report_test_util.h"

using namespace report_test;

namespace {

Diagnosis with_timelines(Job& job) {
  DiagnoseOptions options;
  options.timelines = true;
  return job.diagnose(options);
}

const TimelineRow& row_of(const Timeline& t, int rank) {
  for (const auto& row : t.rows) {
    if (std::find(row.ranks.begin(), row.ranks.end(), rank) != row.ranks.end()) return row;
  }
  FAIL("no row holds rank " << rank);
  return t.rows.front();
}

}  // namespace

TEST_CASE("report timelines: a count that differs is marked on the culprit's cell only, equal ranks share a row") {
  Job job(8);
  for (int r = 0; r < 8; ++r) {
    steps(job[r], 0, 3, true);
    if (r == 5) job[r].calls.back().count = 12;
  }
  Diagnosis d = with_timelines(job);
  REQUIRE(d.timelines.size() == 1);
  const Timeline& t = d.timelines[0];
  CHECK(t.first_seq == 1);
  CHECK(t.last_seq == 3);
  REQUIRE(t.rows.size() == 2);
  CHECK(row_of(t, 0).ranks == std::vector<int>{0, 1, 2, 3, 4, 6, 7});
  const TimelineRow& culprit = row_of(t, 5);
  CHECK(culprit.ranks == std::vector<int>{5});
  REQUIRE(culprit.marks.size() == 3);
  CHECK(culprit.marks[0].state == TimelineMark::State::Completed);
  CHECK_FALSE(culprit.marks[1].differs);
  CHECK(culprit.marks[2].state == TimelineMark::State::Pending);
  CHECK(culprit.marks[2].differs);
  CHECK(culprit.marks[2].count == 12);
  CHECK_FALSE(row_of(t, 0).marks[2].differs);
}

TEST_CASE("report timelines: a rank that never issued the collective the others wait in is missing there") {
  Job job(4);
  for (int r = 0; r < 4; ++r) steps(job[r], 0, r == 2 ? 4 : 5, r != 2);
  Diagnosis d = with_timelines(job);
  REQUIRE(d.timelines.size() == 1);
  const Timeline& t = d.timelines[0];
  CHECK(t.last_seq == 5);
  const TimelineRow& missing = row_of(t, 2);
  CHECK(missing.marks.back().state == TimelineMark::State::Missing);
  CHECK(missing.marks.back().op.empty());
  CHECK(row_of(t, 0).marks.back().state == TimelineMark::State::Pending);
  // The page marks the culprit's row (and only it) and says where it stopped.
  std::string page = render_report_html(d);
  CHECK(page.find("<tr class=\"row culprit\" data-ranks=\"2\">") != std::string::npos);
  CHECK(page.find("<tr class=\"row\" data-ranks=\"0-1,3\">") != std::string::npos);
  CHECK(page.find(verdict_line(d).substr(0, 30)) != std::string::npos);
}

TEST_CASE("report timelines: only the newest columns, and none without the option") {
  Job job(2);
  for (int r = 0; r < 2; ++r) steps(job[r], 0, 30, true);
  Diagnosis d = with_timelines(job);
  REQUIRE(d.timelines.size() == 1);
  CHECK(d.timelines[0].first_seq == 19);
  CHECK(d.timelines[0].last_seq == 30);
  CHECK(d.timelines[0].rows[0].marks.size() == 12);
  // Records the ring no longer keeps are still issued and completed by the counters.
  Job plain(2);
  for (int r = 0; r < 2; ++r) steps(plain[r], 0, 3, true);
  CHECK(plain.diagnose().timelines.empty());
}

TEST_CASE("report html: text from the ledgers is escaped") {
  Job job(2);
  for (int r = 0; r < 2; ++r) steps(job[r], 0, 2, true);
  job[0].host = "<script>alert(1)</script>";
  Diagnosis d = with_timelines(job);
  std::string page = render_report_html(d);
  CHECK(page.find("<script>alert(1)</script>") == std::string::npos);
  CHECK(page.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
}
