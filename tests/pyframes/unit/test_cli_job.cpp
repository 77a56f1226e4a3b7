#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "command/app.h"
#include "command/job_targets.h"
#include "command/options.h"
#include "mini_json.h"
#include "model_samples.h"
#include "pyframes/render.h"

using namespace pyframes;
using namespace pyframes::cli;

namespace {

size_t count_lines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

// A launcher (pid 100) with ranks 101-108 below it, rank 7 at another line; pid 109 is its
// bash helper (not Python); 110 exits before it is read.
Result<Process> job_reader(int64_t pid, const ReadOptions& options) {
  if (pid == 109) return make_error(ErrorKind::NotPython, "process 109 (/bin/bash) is not a CPython process");
  if (pid == 110) return make_error(ErrorKind::NotFound, "no process 110");
  if (pid == 111) return make_error(ErrorKind::PermissionDenied, "cannot read /proc/111/maps");
  Process process = samples::two_thread_process(pid);
  if (pid > 100 && pid <= 108) process.rank = std::to_string(pid - 101);
  process.threads[0].frames[0].line = pid == 108 ? 99 : 88;
  if (options.locals) process.threads[0].frames[0].locals = {Local{"step", pid == 108 ? "4" : "5", false}};
  return process;
}

Sources job_sources(std::map<std::string, std::string> files = {}) {
  Sources sources;
  sources.children = [](int64_t launcher) -> Result<std::vector<int64_t>> {
    if (launcher != 100) return make_error(ErrorKind::NotFound, fmt::format("no process {}", launcher));
    return std::vector<int64_t>{101, 102, 103, 104, 105, 106, 107, 108, 109, 110};
  };
  sources.matching = [](const std::string& pattern) -> Result<std::vector<int64_t>> {
    if (pattern == "train") return std::vector<int64_t>{104, 111};
    return std::vector<int64_t>{};
  };
  sources.read_file = [files](const std::string& path) -> Result<std::string> {
    auto found = files.find(path);
    if (found == files.end()) return make_error(ErrorKind::NotFound, "cannot open " + path + ": No such file");
    return found->second;
  };
  return sources;
}

int run(const std::vector<std::string>& args, Output& output, const Sources& sources = job_sources()) {
  return run_pyframes(args, Terminal{}, job_reader, "1.0", output, &sources);
}

}  // namespace

TEST_CASE("cli job: --children reads every descendant, skips non-Python ones quietly, merges by rank") {
  Output output;
  CHECK(run({"--children", "100"}, output) == kExitOk);
  CHECK(output.err.empty());
  CHECK(output.out.find("8 processes (ranks 0-7): main threads merged") != std::string::npos);
  const size_t outlier = output.out.find("├─ rank 7 (holds the GIL):");
  const size_t rest = output.out.find("└─ ranks 0-6 (holds the GIL):");
  CHECK(outlier != std::string::npos);
  CHECK(rest != std::string::npos);
  CHECK(outlier < rest);
}

TEST_CASE("cli job: a launcher that does not exist is one error line, exit 1") {
  Output output;
  CHECK(run({"--children", "4000"}, output) == kExitTargetProblem);
  CHECK(count_lines(output.err) == 1);
  CHECK(output.err.rfind("pyframes: --children 4000: no process 4000", 0) == 0);
}

TEST_CASE("cli job: --pgrep matches are read, a match that cannot be read is an error") {
  Output output;
  CHECK(run({"--pgrep", "train", "--json"}, output) == kExitTargetProblem);
  CHECK(count_lines(output.err) == 1);
  CHECK(output.err.find("process 111") != std::string::npos);
  const auto doc = mini_json::parse(output.out);
  REQUIRE(doc["processes"].array().size() == 1);
  CHECK(doc["processes"][0]["pid"].number() == 104);
  CHECK_FALSE(doc.has("merged"));  // one process: no merge unless asked
  CHECK(doc["errors"][0]["pid"].number() == 111);
}

TEST_CASE("cli job: nothing found is an error, not an empty success") {
  Output output;
  CHECK(run({"--pgrep", "nothing-matches"}, output) == kExitTargetProblem);
  CHECK(output.err.find("no Python process found") != std::string::npos);
}

TEST_CASE("cli job: PIDs, --children and --pgrep mix, each process once") {
  Output output;
  CHECK(run({"--json", "--no-merge", "104", "--children", "100", "--pgrep", "train"}, output) ==
        kExitTargetProblem);
  const auto doc = mini_json::parse(output.out);
  REQUIRE(doc["processes"].array().size() == 8);
  CHECK(doc["processes"][0]["pid"].number() == 104);  // explicit PIDs first
  CHECK_FALSE(doc.has("merged"));
}

TEST_CASE("cli job: --json merges with several processes and keeps the processes") {
  Output output;
  CHECK(run({"--json", "--children", "100", "--locals"}, output) == kExitOk);
  const auto doc = mini_json::parse(output.out);
  CHECK(doc["processes"].array().size() == 8);
  const auto& tree = doc["merged"]["tree"];
  REQUIRE(tree.array().size() == 1);
  CHECK(tree[0]["label"].str() == "ranks 0-7");
  CHECK(tree[0]["children"][0]["label"].str() == "rank 7");
  const auto& step = tree[0]["children"][0]["frames"][0];
  CHECK(step["line"].number() == 99);
  CHECK(step["locals"][0]["values"][0]["repr"].str() == "4");
}

TEST_CASE("cli job: --merge with one process, --all-threads, --hide-idle and --idle") {
  Output output;
  CHECK(run({"--merge", "--all-threads", "104"}, output) == kExitOk);
  CHECK(output.out.find("1 process (rank 3): all 2 threads merged") != std::string::npos);
  CHECK(output.out.find("rank 3 \"data-loader\" (idle):") != std::string::npos);
  Output idle;
  CHECK(run({"--merge", "--all-threads", "--hide-idle", "104"}, idle) == kExitOk);
  CHECK(idle.out.find("1 idle thread hidden (--hide-idle") != std::string::npos);
  CHECK(idle.out.find("data-loader") == std::string::npos);
  Output plain;
  CHECK(run({"--hide-idle", "104"}, plain) == kExitOk);
  CHECK(plain.out.find("Thread 104") != std::string::npos);
  CHECK(plain.out.find("data-loader") == std::string::npos);
  CHECK(plain.out.find("1 idle thread hidden (--hide-idle") != std::string::npos);
  // --idle is py-spy's "include idle threads": everything shows, as by default.
  Output shown;
  CHECK(run({"--idle", "104"}, shown) == kExitOk);
  CHECK(shown.out.find("data-loader") != std::string::npos);
  CHECK(shown.out.find("hidden") == std::string::npos);
}

TEST_CASE("cli job: --hide-idle never hides the idle main threads of hung ranks, and --json says so") {
  // ranks 0-7, their main threads idle like the loaders: every rank hung in a wait
  auto idle_reader = [](int64_t pid, const ReadOptions& options) -> Result<Process> {
    auto process = job_reader(pid, options);
    if (process) process->threads[0].state = ThreadState::Idle;
    return process;
  };
  const Sources sources = job_sources();
  Output output;
  CHECK(run_pyframes({"--hide-idle", "--children", "100"}, Terminal{}, idle_reader, "1.0", output, &sources) == kExitOk);
  CHECK(output.out.find("8 processes (ranks 0-7): main threads merged") != std::string::npos);
  CHECK(output.out.find("hidden") == std::string::npos);
  CHECK(output.out.find("left out") == std::string::npos);
  Output json;
  CHECK(run_pyframes({"--json", "--hide-idle", "--all-threads", "--children", "100"}, Terminal{}, idle_reader, "1.0",
                     json, &sources) == kExitOk);
  const auto doc = mini_json::parse(json.out);
  CHECK(doc["merged"]["processes"].number() == 8);
  CHECK(doc["merged"]["hidden_idle_threads"].number() == 8);  // the loaders only
  CHECK(doc["merged"]["left_out"].array().empty());
}

TEST_CASE("cli job: --locals reaches the reader") {
  Output output;
  CHECK(run({"--locals", "--no-merge", "108"}, output) == kExitOk);
  CHECK(output.out.find("        step = 4\n") != std::string::npos);
}

TEST_CASE("cli job: --merge-json merges saved documents, several per file") {
  Output first;
  REQUIRE(run({"--json", "--no-merge", "101", "102", "103"}, first) == kExitOk);
  Output second;
  REQUIRE(run({"--json", "108", "111"}, second) == kExitTargetProblem);
  const Sources sources = job_sources({{"node0.json", first.out}, {"node1.json", second.out + first.out}});
  Output output;
  CHECK(run({"--merge-json", "node0.json", "node1.json"}, output, sources) == kExitTargetProblem);
  CHECK(output.out.find("7 processes (ranks 0-2,7): main threads merged") != std::string::npos);
  CHECK(count_lines(output.err) == 1);  // the saved failure of process 111
  CHECK(output.err.find("process 111 (in node1.json)") != std::string::npos);

  Output json;
  CHECK(run({"--merge-json", "--json", "node0.json"}, json, sources) == kExitOk);
  const auto doc = mini_json::parse(json.out);
  CHECK_FALSE(doc.has("processes"));
  CHECK(doc["merged"]["members"][0]["source"].str() == "node0.json");
}

TEST_CASE("cli job: --merge-json: a missing or damaged file is one error line each, the rest still merge") {
  Output good;
  REQUIRE(run({"--json", "101", "102"}, good) == kExitOk);
  const Sources sources = job_sources({{"good.json", good.out}, {"bad.json", "{\"processes\": [{\"pid\": 1}]}"},
                                       {"text.txt", "Process 1: python"}});
  Output output;
  CHECK(run({"--merge-json", "good.json", "bad.json", "gone.json", "text.txt"}, output, sources) ==
        kExitTargetProblem);
  CHECK(count_lines(output.err) == 3);
  CHECK(output.err.find("pyframes: bad.json: not a pyframes --json document: processes[0].threads is missing") !=
        std::string::npos);
  CHECK(output.err.find("gone.json") != std::string::npos);
  CHECK(output.err.find("text.txt: not valid JSON") != std::string::npos);
  CHECK(output.out.find("2 processes (ranks 0-1)") != std::string::npos);
  Output none;
  CHECK(run({"--merge-json", "gone.json"}, none, sources) == kExitTargetProblem);
  CHECK(none.out.empty());
  CHECK(count_lines(none.err) == 1);
}

TEST_CASE("cli job options: values, usage errors") {
  auto parsed = parse_options({"--children", "12", "--pgrep", "torchrun", "--children=13", "--merge", "--locals",
                               "--all-threads", "--hide-idle"});
  REQUIRE(parsed.ok());
  CHECK(parsed->children_of == std::vector<int64_t>{12, 13});
  CHECK(parsed->patterns == std::vector<std::string>{"torchrun"});
  CHECK(parsed->merge == MergeMode::Always);
  CHECK(parsed->locals);
  CHECK(parsed->all_threads);
  CHECK(parsed->hide_idle);
  CHECK(parsed->targets.empty());
  CHECK(parse_options({"--no-merge", "1"})->merge == MergeMode::Never);
  CHECK(parse_options({"--idle", "1"})->show_idle);
  CHECK_FALSE(parse_options({"--idle", "1"})->hide_idle);
  CHECK_FALSE(parse_options({"--idle", "--hide-idle", "1"}).ok());
  CHECK(parse_options({"--merge-json", "a.json", "-"})->json_files == std::vector<std::string>{"a.json", "-"});

  for (const auto& [args, mentions] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--children"}, "needs a value"},
           {{"--children", "abc"}, "'abc' is not a PID"},
           {{"--pgrep="}, "empty pattern"},
           {{"--merge-json"}, "no file given"},
           {{"--merge-json", "--children", "1", "a.json"}, "do not apply"},
           {{"--merge"}, "no PID or core file given"}}) {
    auto bad = parse_options(args);
    INFO("mentions: " << mentions);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().kind == ErrorKind::Usage);
    CHECK(bad.error().message.find(mentions) != std::string::npos);
  }
}

TEST_CASE("cli job: a --pgrep pattern that is not a regular expression is a usage error, nothing is read") {
  Sources sources = job_sources();
  sources.matching = [](const std::string& pattern) -> Result<std::vector<int64_t>> {
    return make_error(ErrorKind::Usage, "'" + pattern + "' is not a valid extended regular expression");
  };
  Output output;
  CHECK(run({"--pgrep", "(", "104"}, output, sources) == kExitUsage);
  CHECK(count_lines(output.err) == 1);
  CHECK(output.out.empty());
}
