// Reading ledgers and exports on several threads (report/inputs/read_in_parallel.h): every item
// is prepared once and finished in order, and the report comes out the same, byte for byte, on
// one thread and on several. Named "ledger ..." so that the ThreadSanitizer stage runs them.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "report/inputs/read_in_parallel.h"
#include "report/outputs/export_write.h"
#include "report/wording/render.h"
#include "report_test_util.h"

using namespace report_test;
namespace fs = std::filesystem;

namespace {

struct Slot {
  size_t item = SIZE_MAX;
  size_t worker = SIZE_MAX;
};

// Runs read_in_parallel over `count` items and checks what a caller relies on.
void check_order(size_t count, size_t threads, size_t batch) {
  CAPTURE(count);
  CAPTURE(threads);
  CAPTURE(batch);
  std::vector<Slot> slots(std::max<size_t>(1, std::min(count, 2 * batch)));
  std::vector<std::atomic<int>> prepared(count);
  std::vector<size_t> finished;
  std::atomic<size_t> highest_worker{0};
  hangshim::report::read_in_parallel(
      count, threads, batch,
      [&](size_t worker, size_t i) {
        prepared[i].fetch_add(1);
        slots[i % slots.size()] = {i, worker};
        size_t seen = highest_worker.load();
        while (worker > seen && !highest_worker.compare_exchange_weak(seen, worker)) {
        }
      },
      [&](size_t i) {
        // The slot still holds this item: nothing prepared later wrote over it.
        CHECK(slots[i % slots.size()].item == i);
        finished.push_back(i);
      });
  REQUIRE(finished.size() == count);
  for (size_t i = 0; i < count; ++i) {
    CHECK(finished[i] == i);
    CHECK(prepared[i].load() == 1);
  }
  CHECK(highest_worker.load() < std::max<size_t>(threads, 1));
}

}  // namespace

TEST_CASE("ledger reading in parallel: every item is prepared once and finished in order, on any number of threads") {
  for (size_t threads : {1, 2, 3, 8}) {
    for (size_t count : {0, 1, 5, 64, 1000}) {
      for (size_t batch : {1, 7, 64}) check_order(count, threads, batch);
    }
  }
}

TEST_CASE("ledger reading in parallel: a failure stops the work and is thrown once every thread has stopped") {
  for (size_t threads : {1, 2, 4}) {
    CAPTURE(threads);
    std::vector<size_t> finished;
    CHECK_THROWS_AS(hangshim::report::read_in_parallel(
                        1000, threads, 16,
                        [&](size_t, size_t i) {
                          if (i == 300) throw std::runtime_error("damaged");
                        },
                        [&](size_t i) { finished.push_back(i); }),
                    std::runtime_error);
    // What was finished is the beginning, in order, and stops before the failed item's batch ends.
    for (size_t k = 0; k < finished.size(); ++k) CHECK(finished[k] == k);
    CHECK(finished.size() <= 320);
  }
}

namespace {

// A job with some variety (pending calls, a call-site only some ranks reach, uneven counts),
// so that the order in which call-sites are interned would show in the report.
void vary(Job& job) {
  for (int r = 0; r < static_cast<int>(job.ranks.size()); ++r) {
    steps(job[r], 0, 20 + r % 3, r % 5 == 0);
    if (r % 7 == 0) steps(job[r], 3, 2);
  }
  job.write();
}

std::string report_of(const std::vector<std::string>& paths, size_t threads) {
  Inputs inputs;
  LoadOptions load;
  load.here = "the-test-host";
  load.now_ns = kStart + 5'000'000'000ull;
  load.threads = threads;
  inputs.now_ns = load.now_ns;
  load_paths(paths, inputs, load);
  settle_inputs(inputs);
  CHECK(inputs.errors.empty());
  DiagnoseOptions options;
  options.threads = threads;  // the analysis's passes split the same way
  Diagnosis d = diagnose(inputs, options);
  return render_report_text(d, {}) + render_report_json(d);
}

}  // namespace

TEST_CASE("ledger reading in parallel: the report over a directory of ledgers is the same on one thread and on four") {
  Job job(300);
  vary(job);
  std::string one = report_of({job.dir.path()}, 1);
  CHECK(one.find("rank") != std::string::npos);
  CHECK(report_of({job.dir.path()}, 4) == one);
  CHECK(report_of({job.dir.path()}, 3) == one);
  // The files named one by one, as a shell's glob names them, are read the same way.
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(job.dir.path())) files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  CHECK(report_of(files, 4) == report_of(files, 1));
}

TEST_CASE("ledger reading in parallel: the report over exports is the same on one thread and on four") {
  Job job(128);
  vary(job);
  // Nodes of 4 ranks, one export each, as `hangshim export` on every node writes them.
  std::vector<std::string> ledgers;
  for (const auto& entry : fs::directory_iterator(job.dir.path())) ledgers.push_back(entry.path().string());
  std::sort(ledgers.begin(), ledgers.end());
  std::string exports = job.dir.file("exports");
  REQUIRE(::mkdir(exports.c_str(), 0700) == 0);
  for (size_t node = 0; node * 4 < ledgers.size(); ++node) {
    std::string dir = job.dir.file("node" + std::to_string(node));
    REQUIRE(::mkdir(dir.c_str(), 0700) == 0);
    for (size_t i = node * 4; i < std::min(ledgers.size(), node * 4 + 4); ++i) {
      fs::rename(ledgers[i], dir + "/" + fs::path(ledgers[i]).filename().string());
    }
    ExportOptions options;
    options.dirs = {dir};
    options.stacks = false;
    options.here = "node" + std::to_string(node);
    options.now_ns = kStart + 1;
    ExportOutcome out = build_export(options);
    REQUIRE(out.ledgers == 4);
    std::ofstream(exports + "/node" + std::to_string(node) + ".json", std::ios::binary) << out.json;
  }
  std::string one = report_of({exports}, 1);
  CHECK(one.find("rank") != std::string::npos);
  CHECK(report_of({exports}, 4) == one);
}
