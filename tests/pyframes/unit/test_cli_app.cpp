#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "command/app.h"
#include "command/options.h"
#include "mini_json.h"
#include "model_samples.h"
#include "pyframes/render.h"

using namespace pyframes;
using namespace pyframes::cli;

namespace {

size_t count_lines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

// Odd PIDs fail as "permission denied", even ones give a sample process.
Result<Process> fake_reader(int64_t pid, const ReadOptions&) {
  if (pid % 2 == 1) return make_error(ErrorKind::PermissionDenied, fmt::format("cannot read process {}", pid));
  return samples::two_thread_process(pid);
}

// Runs pyframes on `pid`, read as the sample process with `truncate` applied: a truncated stack
// is a target problem (exit 1) reported in one line on stderr, however many threads it hit.
Output run_truncated(const std::string& pid, void (*truncate)(Process&)) {
  auto truncating = [truncate](int64_t target, const ReadOptions&) -> Result<Process> {
    Process process = samples::two_thread_process(target);
    truncate(process);
    return process;
  };
  Output output;
  CHECK(run_pyframes({pid}, Terminal{}, truncating, "1.0", output) == kExitTargetProblem);
  CHECK(count_lines(output.err) == 1);
  return output;
}

}  // namespace

TEST_CASE("cli app: one failing PID prints one error line, the others still print, exit 1") {
  Output output;
  const int status = run_pyframes({"--no-merge", "10", "11", "12"}, Terminal{}, fake_reader, "1.0", output);
  CHECK(status == kExitTargetProblem);
  CHECK(count_lines(output.err) == 1);
  CHECK(output.err.rfind("pyframes: process 11: cannot read process 11 (", 0) == 0);
  CHECK(output.err.find("CAP_SYS_PTRACE") != std::string::npos);
  const size_t first = output.out.find("Process 10");
  const size_t second = output.out.find("Process 12");
  CHECK(first != std::string::npos);
  CHECK(second != std::string::npos);
  CHECK(first < second);  // argument order, whatever order the reads finished in
  CHECK(output.out.find("Process 11") == std::string::npos);
}

TEST_CASE("cli app: all good is exit 0 with nothing on stderr") {
  Output output;
  CHECK(run_pyframes({"2", "4"}, Terminal{}, fake_reader, "1.0", output) == kExitOk);
  CHECK(output.err.empty());
}

TEST_CASE("cli app: --json prints one document with the processes and the failures") {
  Output output;
  const int status = run_pyframes({"--json", "3", "8", "6"}, Terminal{true, false}, fake_reader, "1.0", output);
  CHECK(status == kExitTargetProblem);
  CHECK(output.out.find('\x1b') == std::string::npos);
  const auto doc = mini_json::parse(output.out);
  REQUIRE(doc["processes"].array().size() == 2);
  CHECK(doc["processes"][0]["pid"].number() == 8);
  CHECK(doc["processes"][1]["pid"].number() == 6);
  REQUIRE(doc["errors"].array().size() == 1);
  CHECK(doc["errors"][0]["pid"].number() == 3);
  CHECK(count_lines(output.err) == 1);
}

TEST_CASE("cli app: usage errors exit 2 without reading anything") {
  std::atomic<int> reads{0};
  auto counting = [&](int64_t pid, const ReadOptions& options) {
    ++reads;
    return fake_reader(pid, options);
  };
  for (const std::vector<std::string>& args : {std::vector<std::string>{}, {"--nope", "2"}, {"2", "0"}}) {
    Output output;
    CHECK(run_pyframes(args, Terminal{}, counting, "1.0", output) == kExitUsage);
    CHECK(count_lines(output.err) == 1);
    CHECK(output.err.rfind("pyframes: usage: ", 0) == 0);
    CHECK(output.out.empty());
  }
  CHECK(reads == 0);
}

TEST_CASE("cli app: --help and --version go to stdout, exit 0") {
  Output help;
  CHECK(run_pyframes({"--help"}, Terminal{}, fake_reader, "1.0", help) == kExitOk);
  CHECK(help.out == help_text());
  Output version;
  CHECK(run_pyframes({"--version"}, Terminal{}, fake_reader, "4.5.6", version) == kExitOk);
  CHECK(version.out == version_text("4.5.6"));
}

TEST_CASE("cli app: colour only on a terminal and never with NO_COLOR") {
  const auto render = [](Terminal terminal) {
    Output output;
    (void)run_pyframes({"2"}, terminal, fake_reader, "1.0", output);
    return output.out.find('\x1b') != std::string::npos;
  };
  CHECK(render(Terminal{true, false}));
  CHECK_FALSE(render(Terminal{false, false}));
  CHECK_FALSE(render(Terminal{true, true}));
}

TEST_CASE("cli app: --lock reaches the reader, default never locks") {
  std::vector<bool> seen;
  std::mutex mutex;
  auto recording = [&](int64_t pid, const ReadOptions& options) {
    std::lock_guard<std::mutex> lock(mutex);
    seen.push_back(options.lock);
    return fake_reader(pid, options);
  };
  Output a;
  (void)run_pyframes({"2"}, Terminal{}, recording, "1.0", a);
  Output b;
  (void)run_pyframes({"--lock", "2"}, Terminal{}, recording, "1.0", b);
  CHECK(seen == std::vector<bool>{false, true});
}

TEST_CASE("cli app: a truncated stack is printed, reported on stderr and exits 1") {
  const Output output = run_truncated("20", [](Process& process) {
    process.threads[1].truncated = true;
    process.threads[1].truncation_reason = "frame chain loops back";
  });
  CHECK(output.err.find("frame chain loops back") != std::string::npos);
  CHECK(output.out.find("truncated: frame chain loops back") != std::string::npos);
}

TEST_CASE("cli app: several truncated threads still give one error line for the process") {
  const Output output = run_truncated("30", [](Process& process) {
    for (Thread& thread : process.threads) thread.truncated = true;
    process.threads[0].native_id = 0;
    process.threads[0].thread_id = 0;
  });
  CHECK(output.err.find("thread #1") != std::string::npos);
  CHECK(output.err.find("1 more threads truncated") != std::string::npos);
}

TEST_CASE("cli parallel reads: several at once, bounded, results in order, exceptions contained") {
  std::atomic<int> running{0};
  std::atomic<int> peak{0};
  auto slow = [&](int64_t pid, const ReadOptions&) -> Result<Process> {
    const int now = ++running;
    int expected = peak.load();
    while (now > expected && !peak.compare_exchange_weak(expected, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    --running;
    if (pid == 5) throw std::runtime_error("boom");
    return samples::two_thread_process(pid);
  };
  std::vector<int64_t> pids;
  for (int64_t pid = 1; pid <= 24; ++pid) pids.push_back(pid);
  const auto results = read_processes(pids, ReadOptions{}, slow, 6);
  REQUIRE(results.size() == pids.size());
  for (size_t i = 0; i < pids.size(); ++i) {
    if (pids[i] == 5) {
      REQUIRE_FALSE(results[i].ok());
      CHECK(results[i].error().message.find("boom") != std::string::npos);
    } else {
      REQUIRE(results[i].ok());
      CHECK(results[i]->pid == pids[i]);
    }
  }
  CHECK(peak.load() > 1);
  CHECK(peak.load() <= 6);
}

TEST_CASE("cli app: core files and PIDs mix, core options reach the core reader") {
  const std::string core = std::string(HANGSHIM_BINARY_DIR) + "/CMakeCache.txt";  // any existing file
  std::vector<std::string> seen_search;
  std::string seen_exe;
  CoreReader fake_core = [&](const std::string& path, const CoreOptions& options) -> Result<Process> {
    seen_exe = options.executable.value_or("");
    seen_search = options.lib_search;
    Process process = samples::two_thread_process(77);
    process.source = path;
    return process;
  };
  Output output;
  const int status = run_pyframes({"--json", "2", core, "--exe", "/x/python", "--lib-search", "/a", "--lib-search", "/b"},
                                  Terminal{}, Readers(fake_reader, fake_core), "1.0", output);
  CHECK(status == kExitOk);
  CHECK(seen_exe == "/x/python");
  CHECK(seen_search == std::vector<std::string>{"/a", "/b"});
  const auto doc = mini_json::parse(output.out);
  REQUIRE(doc["processes"].array().size() == 2);
  CHECK(doc["processes"][0]["pid"].number() == 2);
  CHECK(doc["processes"][1]["source"].str() == core);
}

TEST_CASE("cli app: a failing core names the core in its error line") {
  const std::string core = std::string(HANGSHIM_BINARY_DIR) + "/CMakeCache.txt";
  CoreReader failing = [](const std::string& path, const CoreOptions&) -> Result<Process> {
    return make_error(ErrorKind::Usage, path + " is not a core file");
  };
  Output output;
  CHECK(run_pyframes({core}, Terminal{}, Readers(fake_reader, failing), "1.0", output) == kExitTargetProblem);
  CHECK(output.err.rfind("pyframes: core " + core + ": ", 0) == 0);
}
