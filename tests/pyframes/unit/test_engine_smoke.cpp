// The engine against live interpreters: fixtures/engine_smoke_target.py parks threads in the
// awkward places (300-deep recursion, decorators, lambdas, generators, C callbacks,
// comprehensions, exec'd code, non-ASCII names and files, asyncio, a thread spinning with the
// GIL) and prints what each thread sees of its own stack; read_process must see the same.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <thread>

#include "mini_json.h"
#include "memory/process_memory.h"
#include "pyframes/proc_maps.h"
#include "pyframes/callsite.h"
#include "pyframes/layout.h"
#include "pyframes/pyframes.h"
#include "python_process.h"
#include "run_program.h"

using namespace pyframes;
using test_support::PythonProcess;

namespace {

const std::string kTarget = std::string(HANGSHIM_SOURCE_DIR) + "/tests/pyframes/unit/fixtures/engine_smoke_target.py";

const Thread* find_thread(const Process& process, uint64_t ident) {
  for (const auto& t : process.threads) {
    if (t.thread_id == ident) return &t;
  }
  return nullptr;
}

// Compares one thread's frames with what the thread reported about itself.
void check_thread(const Thread& thread, const mini_json::Value& expected, bool check_locals) {
  const auto& frames = expected["frames"].array();
  CHECK_FALSE(thread.truncated);
  REQUIRE(thread.frames.size() == frames.size());
  for (size_t i = 0; i < frames.size(); ++i) {
    const Frame& got = thread.frames[i];
    const auto& want = frames[i];
    CAPTURE(i);
    CHECK(got.function == want["function"].str());
    CHECK(got.qualname == want["qualname"].str());
    CHECK(got.file == want["file"].str());
    CHECK(got.line == want["line"].as_int());
    if (!check_locals) continue;
    std::map<std::string, std::string> locals;
    for (const auto& local : got.locals) locals[local.name] = local.repr;
    for (const auto& [name, repr] : want["locals"].object()) {
      CAPTURE(name);
      REQUIRE(locals.count(name) == 1);
      CHECK(locals[name] == repr.str());
    }
  }
}

void check_against_report(const Process& process, const mini_json::Value& report, bool with_locals) {
  const auto& version = report["version"].array();
  CHECK(process.python_version == fmt::format("{}.{}.{}", version[0].as_int(), version[1].as_int(), version[2].as_int()));
  for (const auto& expected : report["threads"].array()) {
    CAPTURE(expected["name"].str());
    const Thread* thread = find_thread(process, static_cast<uint64_t>(expected["ident"].number()));
    REQUIRE(thread != nullptr);
    CHECK(thread->native_id == static_cast<int64_t>(expected["native_id"].number()));
    CHECK(thread->name == expected["name"].str());
    bool spinning = expected["spinning"].boolean();
    check_thread(*thread, expected, with_locals && !spinning);
  }
}

}  // namespace

TEST_CASE("read_process sees what every interpreter reports about its own threads") {
  auto pythons = test_support::test_pythons();
  if (pythons.empty()) {
    MESSAGE("no CPython interpreters found: skipped");
    return;
  }
  for (const auto& python : pythons) {
    CAPTURE(python);
    PythonProcess target(python, {kTarget});
    REQUIRE(target.pid() > 0);
    auto line = target.read_line(std::chrono::seconds(60));
    REQUIRE(line.has_value());
    mini_json::Value report = mini_json::parse(*line);

    ReadOptions options;
    options.locals = true;
    auto process = read_process(target.pid(), options);
    REQUIRE_MESSAGE(process.ok(), process.error().message);
    check_against_report(*process, report, true);

    // The thread spinning in pure Python holds the GIL; nobody else does.
    for (const auto& expected : report["threads"].array()) {
      const Thread* thread = find_thread(*process, static_cast<uint64_t>(expected["ident"].number()));
      REQUIRE(thread != nullptr);
      CAPTURE(thread->name);
      CHECK(thread->gil == expected["spinning"].boolean());
    }

    // The shim's path: raw code locations of the innermost frames, resolved one by one.
    {
      ProcessMemory memory(target.pid(), false);
      auto modules = read_proc_maps(target.pid());
      REQUIRE(modules.ok());
      auto located = locate_python(memory, *modules, ReadOptions{});
      REQUIRE(located.ok());
      auto layout = select_layout(memory, *located);
      REQUIRE(layout.ok());
      ThreadStateRef refs[64];
      size_t thread_count = list_thread_states(memory, *layout, *located, refs, 64);
      CHECK(thread_count >= report["threads"].array().size());  // every reporting thread (more may exist)
      for (const auto& expected : report["threads"].array()) {
        CAPTURE(expected["name"].str());
        uint64_t tstate = find_thread_state(memory, *layout, *located, static_cast<uint64_t>(expected["ident"].number()));
        REQUIRE(tstate != 0);
        CodeLocation locations[4];
        size_t count = collect_code_locations(memory, *layout, tstate, locations, 4);
        const auto& frames = expected["frames"].array();
        REQUIRE(count == std::min<size_t>(4, frames.size()));
        for (size_t i = 0; i < count; ++i) {
          auto frame = describe_code_location(memory, *layout, locations[i]);
          REQUIRE(frame.ok());
          CHECK(frame->qualname == frames[i]["qualname"].str());
          CHECK(frame->file == frames[i]["file"].str());
          CHECK(frame->line == frames[i]["line"].as_int());
        }
      }
    }

    // The same without symbols: the runtime found by scanning the module's data.
    ReadOptions scan;
    scan.use_symbols = false;
    auto scanned = read_process(target.pid(), scan);
    REQUIRE_MESSAGE(scanned.ok(), scanned.error().message);
    check_against_report(*scanned, report, false);

    // --lock stops and resumes the target: same stacks, and the target keeps running.
    ReadOptions locked;
    locked.lock = true;
    auto under_lock = read_process(target.pid(), locked);
    REQUIRE_MESSAGE(under_lock.ok(), under_lock.error().message);
    check_against_report(*under_lock, report, false);
  }
}

TEST_CASE("a stripped libpython is read through .dynsym or the data scan") {
  // Copies of libpython with `strip --strip-all` (no .symtab: 3.6's interp_head is gone, the
  // exported _PyRuntime of 3.7+ stays in .dynsym), loaded through LD_LIBRARY_PATH.
  if (test_support::run_program({"strip", "--version"}) != 0) {
    MESSAGE("no strip: skipped");
    return;
  }
  int tested = 0;
  for (const auto& python : test_support::test_pythons()) {
    std::string version = test_support::pyenv_version_of(python);
    if (version.empty()) continue;
    std::filesystem::path lib_dir = std::filesystem::path(python).parent_path().parent_path() / "lib";
    std::filesystem::path library;
    for (const auto& entry : std::filesystem::directory_iterator(lib_dir)) {
      std::string name = entry.path().filename().string();
      if (name.rfind("libpython3", 0) == 0 && name.size() > 7 && name.substr(name.size() - 7) == ".so.1.0") {
        library = entry.path();
      }
    }
    if (library.empty()) continue;
    CAPTURE(python);
    auto dir = std::filesystem::temp_directory_path() / fmt::format("pyframes-stripped-{}-{}", getpid(), version);
    std::filesystem::create_directories(dir);
    auto copy = dir / library.filename();
    std::filesystem::copy_file(library, copy, std::filesystem::copy_options::overwrite_existing);
    REQUIRE(test_support::run_program({"strip", "--strip-all", copy.string()}) == 0);
    {
      PythonProcess target(python, {kTarget, "--shallow"}, false, {"LD_LIBRARY_PATH=" + dir.string()});
      REQUIRE(target.pid() > 0);
      auto line = target.read_line(std::chrono::seconds(60));
      REQUIRE(line.has_value());
      mini_json::Value report = mini_json::parse(*line);
      auto modules = read_proc_maps(target.pid());
      REQUIRE(modules.ok());
      auto files = modules->files();
      REQUIRE(std::find(files.begin(), files.end(), copy.string()) != files.end());  // the stripped copy runs
      auto process = read_process(target.pid(), ReadOptions{});
      REQUIRE_MESSAGE(process.ok(), process.error().message);
      check_against_report(*process, report, false);
    }
    std::filesystem::remove_all(dir);
    ++tested;
  }
  CHECK(tested > 0);
}

TEST_CASE("several targets read in parallel threads") {
  // The CLI reads many PIDs at once: nothing in the engine may be shared unsafely.
  auto pythons = test_support::test_pythons();
  if (pythons.size() < 2) {
    MESSAGE("fewer than two interpreters: skipped");
    return;
  }
  std::vector<std::unique_ptr<PythonProcess>> targets;
  std::vector<mini_json::Value> reports;
  for (const auto& python : pythons) {
    targets.push_back(std::make_unique<PythonProcess>(python, std::vector<std::string>{kTarget, "--shallow"}));
    auto line = targets.back()->read_line(std::chrono::seconds(60));
    REQUIRE(line.has_value());
    reports.push_back(mini_json::parse(*line));
  }
  std::vector<Result<Process>> results(targets.size(), make_error(ErrorKind::Io, "not read"));
  std::vector<std::thread> readers;
  for (size_t i = 0; i < targets.size(); ++i) {
    readers.emplace_back([&, i] { results[i] = read_process(targets[i]->pid(), ReadOptions{}); });
  }
  for (auto& reader : readers) reader.join();
  for (size_t i = 0; i < targets.size(); ++i) {
    CAPTURE(pythons[i]);
    REQUIRE_MESSAGE(results[i].ok(), results[i].error().message);
    check_against_report(*results[i], reports[i], false);
  }
}
