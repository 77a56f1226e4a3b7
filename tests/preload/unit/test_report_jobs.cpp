// Ledgers of several jobs in one directory (the default keeps them after a job ends): the report
// speaks about one job — the newest one still running by default, or the one asked for — lists
// the others, and never presents a job whose processes are all gone as a current hang.
#include <doctest/doctest.h>

#include "report/wording/phrases.h"
#include "report_test_util.h"

using namespace report_test;

namespace {

constexpr const char* kHere = "the-test-host";

// A job of `world` ranks on this host, started at `start`, by the `hangshim run` named `launcher`,
// its world communicator `comm_key`; rank `stuck` left waiting in its last all_reduce.
std::vector<synth::Rank> make_job(int world, uint64_t start, const std::string& launcher, uint64_t comm_key,
                                  int64_t first_pid, int stuck) {
  std::vector<synth::Rank> ranks;
  for (int r = 0; r < world; ++r) {
    synth::Rank rank = make_rank(r, world);
    rank.host = kHere;
    rank.pid = first_pid + r;  // no such processes: liveness says gone
    rank.start_ns = start;
    rank.launcher = launcher;
    rank.comms[0].key = comm_key;
    steps(rank, 0, r == stuck ? 3 : 4, r != stuck);
    ranks.push_back(rank);
  }
  return ranks;
}

Diagnosis report_on(const std::string& dir, const JobSelection& selection, std::vector<InputError>* errors = nullptr) {
  Inputs inputs;
  LoadOptions load;
  load.here = kHere;
  load.now_ns = kStart + 7200'000'000'000ull;
  inputs.now_ns = load.now_ns;
  load_path(dir, inputs, load);
  settle_inputs(inputs, selection, kHere);
  if (errors != nullptr) *errors = inputs.errors;
  return hangshim::report::diagnose(inputs, {});
}

}  // namespace

TEST_CASE("report jobs: two jobs in one directory, the newer is reported and the older listed") {
  ledger_test::TempDir dir;
  uint64_t hour = 3600'000'000'000ull;
  for (const auto& r : make_job(2, kStart, "the-test-host:3900001:100", 0xaaaa000000000001ull, 3900010, 1)) {
    REQUIRE(synth::write(dir.path(), r));
  }
  for (const auto& r : make_job(2, kStart + hour, "the-test-host:3900101:200", 0xbbbb000000000001ull, 3900110, 0)) {
    REQUIRE(synth::write(dir.path(), r));
  }
  Diagnosis d = report_on(dir.path(), {});
  CHECK(d.ledgers == 2);
  CHECK(d.job.key == "launcher:the-test-host:3900101:200");
  REQUIRE(d.other_jobs.size() == 1);
  CHECK(d.other_jobs[0].key == "launcher:the-test-host:3900001:100");
  // The verdict is the newer job's: its rank 0 never issued all_reduce #4 (the older job's rank 1),
  // so its rank 1 waits in it. With one rank on each side and no stacks to show the other out of
  // the loop, the verdict cannot tell stuck from uneven steps and says so (both sides culprits).
  CHECK(verdict_of(d).waiting == std::vector<int>{1});
  CHECK(verdict_of(d).ambiguous);
  for (const auto& s : d.situations) CHECK(s.pid >= 3900110);

  SUBCASE("--job selects the other") {
    Diagnosis old = report_on(dir.path(), {"launcher:the-test-host:3900001:100", {}});
    CHECK(old.job.key == "launcher:the-test-host:3900001:100");
    CHECK(verdict_of(old).waiting == std::vector<int>{0});
    for (const auto& s : old.situations) CHECK(s.pid < 3900100);
  }
  SUBCASE("--pid selects the job of a rank, or of its launcher") {
    CHECK(report_on(dir.path(), {"", {3900011}}).job.key == "launcher:the-test-host:3900001:100");
    CHECK(report_on(dir.path(), {"", {3900101}}).job.key == "launcher:the-test-host:3900101:200");
  }
  SUBCASE("a selection that matches no job is an error naming the jobs there") {
    std::vector<InputError> errors;
    Diagnosis none = report_on(dir.path(), {"slurm:77", {}}, &errors);
    CHECK(none.ledgers == 0);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].message.find("no job slurm:77") != std::string::npos);
    CHECK(errors[0].message.find("launcher:the-test-host:3900001:100") != std::string::npos);
  }
}

TEST_CASE("report jobs: ranks of one job on two nodes, each with its own launcher, are one job by their communicator") {
  ledger_test::TempDir dir;
  auto ranks = make_job(4, kStart, "node-a:100:1", 0xcccc000000000001ull, 3900200, 3);
  ranks[2].launcher = ranks[3].launcher = "node-b:200:1";
  for (const auto& r : ranks) REQUIRE(synth::write(dir.path(), r));
  Diagnosis d = report_on(dir.path(), {});
  CHECK(d.ledgers == 4);
  CHECK(d.other_jobs.empty());
}

TEST_CASE("report jobs: SLURM job ids select by number, steps included") {
  ledger_test::TempDir dir;
  auto a = make_job(2, kStart, "", 0xdddd000000000001ull, 3900300, 1);
  for (auto& r : a) r.slurm_job = "41.0";
  auto b = make_job(2, kStart + 1000, "", 0xeeee000000000001ull, 3900400, 1);
  for (auto& r : b) r.slurm_job = "42.0";
  for (const auto& r : a) REQUIRE(synth::write(dir.path(), r));
  for (const auto& r : b) REQUIRE(synth::write(dir.path(), r));
  CHECK(report_on(dir.path(), {"41", {}}).job.name == "SLURM job 41.0");
  CHECK(report_on(dir.path(), {"slurm:42", {}}).job.key == "slurm:42.0");
  CHECK(report_on(dir.path(), {}).job.key == "slurm:42.0");
}

TEST_CASE("report jobs: a job whose processes are all gone is not presented as a current hang") {
  ledger_test::TempDir dir;
  for (const auto& r : make_job(2, kStart, "the-test-host:3900501:1", 0xffff000000000001ull, 3900510, 1)) {
    REQUIRE(synth::write(dir.path(), r));
  }
  Diagnosis d = report_on(dir.path(), {});
  CHECK(d.ended());
  CHECK(d.problem);
  std::string line = verdict_line(d);
  CHECK(line.rfind("ENDED: the job hangshim run started as pid 3900501 on the-test-host was killed or crashed", 0) == 0);
  CHECK(line.find("its last state: HANG") != std::string::npos);
}
