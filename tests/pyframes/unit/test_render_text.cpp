#include <doctest/doctest.h>
#include <fmt/format.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <vector>

#include "model_samples.h"
#include "pyframes/render.h"

using namespace pyframes;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A scratch directory removed at the end of the test.
struct TempDir {
  std::string path;
  TempDir() {
    char pattern[] = "/tmp/pyframes-render-XXXXXX";
    path = ::mkdtemp(pattern);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  std::string write(const std::string& name, const std::string& content) const {
    const std::string file = path + "/" + name;
    std::ofstream(file, std::ios::binary) << content;
    return file;
  }
};

}  // namespace

TEST_CASE("render_text: one block per thread, frames innermost first as function (file:line)") {
  const Process process = samples::two_thread_process(4242);
  const std::string text = render_text(process, TextOptions{}, nullptr);
  const auto lines = lines_of(text);
  CHECK(text.find(process.python_version) != std::string::npos);
  CHECK(text.find(fmt::format("Process {}", process.pid)) != std::string::npos);
  size_t cursor = 0;
  for (const Thread& thread : process.threads) {
    const std::string header = fmt::format("Thread {}", thread.native_id);
    while (cursor < lines.size() && lines[cursor].rfind(header, 0) != 0) ++cursor;
    REQUIRE(cursor < lines.size());
    CHECK(lines[cursor].find(fmt::format("\"{}\"", thread.name)) != std::string::npos);
    CHECK((lines[cursor].find("holds the GIL") != std::string::npos) == thread.gil);
    for (const Frame& frame : thread.frames) {
      ++cursor;
      REQUIRE(cursor < lines.size());
      CHECK(lines[cursor] == fmt::format("    {} ({}:{})", frame.function, frame.file, frame.line));
    }
  }
}

TEST_CASE("render_text: colour only when asked, and names from the target cannot inject escapes") {
  Process process = samples::two_thread_process(10);
  process.threads[0].frames[0].function = "evil\x1b]0;title\x07\nnext";
  process.threads[0].name = "name\r\x1b[2J";
  const std::string plain = render_text(process, TextOptions{false, false}, nullptr);
  CHECK(plain.find('\x1b') == std::string::npos);
  CHECK(plain.find('\r') == std::string::npos);
  CHECK(plain.find("evil\\x1b]0;title\\x07\\x0anext (") != std::string::npos);  // stays on its frame line
  const std::string colored = render_text(process, TextOptions{true, false}, nullptr);
  CHECK(colored.find("\x1b[") != std::string::npos);
  CHECK(colored.find("\x1b]0;") == std::string::npos);
}

TEST_CASE("render_text: source lines come from the file, cleaned") {
  TempDir dir;
  const std::vector<std::string> source = {"def f():", "\tx = 1\t# tab\r", "  \xFF bad \x1b byte", "    return x"};
  std::string content;
  for (const auto& line : source) content += line + "\n";
  const std::string file = dir.write("mod.py", content);

  SourceCache cache;
  CHECK(cache.line(file, 1).value() == "def f():");
  CHECK(cache.line(file, 2).value() == "x = 1 # tab");
  CHECK(cache.line(file, 3).value() == "\xEF\xBF\xBD bad \\x1b byte");
  CHECK(cache.line(file, 4).value() == "return x");
  CHECK_FALSE(cache.line(file, 5).has_value());
  CHECK_FALSE(cache.line(file, 0).has_value());
  CHECK_FALSE(cache.line(dir.path + "/missing.py", 1).has_value());

  Process process = samples::two_thread_process(11);
  process.source = "core.11";  // not live: only the path itself is tried
  process.threads[0].frames[0].file = file;
  process.threads[0].frames[0].line = 4;
  const auto lines = lines_of(render_text(process, TextOptions{}, &cache));
  bool found = false;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    if (lines[i].find(fmt::format("({}:4)", file)) != std::string::npos) {
      CHECK(lines[i + 1] == "        return x");
      found = true;
    }
  }
  CHECK(found);
}

TEST_CASE("SourceCache: never opens a FIFO or directory, and evicts beyond its bound") {
  TempDir dir;
  const std::string fifo = dir.path + "/pipe.py";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  SourceCache cache(2);
  // Opening a FIFO that has no writer blocks for good: the lookups run on a thread, and whether
  // they returned at all is what counts. Only a cache that opened the FIFO reaches the deadline;
  // the FIFO is then opened for writing, which lets the blocked open return.
  auto lookups = std::async(std::launch::async, [&] {
    return std::make_pair(cache.line(fifo, 1).has_value(), cache.line(dir.path, 1).has_value());
  });
  const bool returned = lookups.wait_for(std::chrono::seconds(120)) == std::future_status::ready;
  CHECK_MESSAGE(returned, "SourceCache::line blocked on a FIFO");
  if (!returned) {
    const int unblock = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (unblock >= 0) ::close(unblock);
  }
  const auto [fifo_line, dir_line] = lookups.get();
  CHECK_FALSE(fifo_line);
  CHECK_FALSE(dir_line);

  std::vector<std::string> files;
  for (int i = 0; i < 4; ++i) files.push_back(dir.write(fmt::format("f{}.py", i), fmt::format("line_{}\n", i)));
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 4; ++i) CHECK(cache.line(files[i], 1).value() == fmt::format("line_{}", i));
  }
}

TEST_CASE("SourceCache: reads at most max_file_bytes of a file") {
  TempDir dir;
  const std::string file = dir.write("big.py", "first\nsecond\nthird\n");
  SourceCache cache(4, 8);  // "first\nse"
  CHECK(cache.line(file, 1).value() == "first");
  CHECK(cache.line(file, 2).value() == "se");
  CHECK_FALSE(cache.line(file, 3).has_value());
}

TEST_CASE("render_text: truncated and empty threads say so, native frames are marked") {
  Process process = samples::two_thread_process(12);
  process.threads[0].truncated = true;
  process.threads[0].truncation_reason = "frame chain loops back";
  process.threads[1].frames.clear();
  const Frame native = samples::native_frame("", "/lib/libc.so.6", 0x7f00000010, 0x10);  // no symbol known
  process.threads[0].frames.push_back(native);
  const std::string text = render_text(process, TextOptions{}, nullptr);
  CHECK(text.find("truncated: " + process.threads[0].truncation_reason) != std::string::npos);
  CHECK(text.find("(no Python frames)") != std::string::npos);
  // Without a symbol: the module's base name and the offset, the form addr2line takes.
  CHECK(text.find(fmt::format("    [native] libc.so.6+{:#x}\n", native.offset)) != std::string::npos);
}

TEST_CASE("render_text: native frames name their function and module, an unmerged stack follows its note") {
  Process process = samples::two_thread_process(12);
  const Frame native =
      samples::native_frame("pthread_cond_wait", "/lib/x86_64-linux-gnu/libc.so.6", 0x7f0000abcd, 0x8abcd);
  process.threads[0].frames.insert(process.threads[0].frames.begin(), native);
  const Frame unknown = samples::native_frame("", "", 0x1234, 0);  // in no mapping: only the address is known
  process.threads[1].native_note = "native stack not merged: 2 calls of the evaluation loop for 3 runs";
  process.threads[1].native_frames = {native, unknown};
  const std::string text = render_text(process, TextOptions{}, nullptr);
  CHECK(text.find("    [native] pthread_cond_wait (libc.so.6+0x8abcd)\n") != std::string::npos);
  const size_t note = text.find("    ... " + process.threads[1].native_note + "\n");
  REQUIRE(note != std::string::npos);
  const size_t after = text.find("    [native] pthread_cond_wait (libc.so.6+0x8abcd)\n    [native] 0x1234\n", note);
  CHECK(after != std::string::npos);
}
