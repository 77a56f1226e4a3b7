// Test driver for the core-file integration tests: opens a core with the pyframes core API and
// prints, as JSON, what the core says (pid, executable, argv, fatal signal, threads, warnings).
//   core_probe CORE [--stacks] [--exe PATH] [--lib-search DIR]... [--root DIR] [--read ADDRESS:SIZE]...
// --stacks adds "process": the model read_core() returns (threads, frames, warnings, ...).
// --read prints the bytes at ADDRESS as hex (to compare memory with the files it came from).
// Errors: one line `pyframes: <message> (<hint>)` on stderr, exit 1; bad usage exits 2.
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "pyframes/core.h"

namespace {

std::string quote(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      out += fmt::format("\\u{:04x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + quote(items[i]);
  return out + "]";
}

const char* kind_name(pyframes::Frame::Kind kind) {
  return kind == pyframes::Frame::Kind::Python ? "python" : "native";
}

void print_process(const pyframes::Process& process) {
  fmt::print("  \"process\": {{\n    \"pid\": {}, \"source\": {}, \"python_version\": {}, \"executable\": {},\n",
             process.pid, quote(process.source), quote(process.python_version), quote(process.executable));
  fmt::print("    \"command_line\": {}, \"fatal_signal\": {}, \"rank\": {}, \"local_rank\": {},\n",
             list(process.command_line), quote(process.fatal_signal), quote(process.rank), quote(process.local_rank));
  fmt::print("    \"warnings\": {},\n    \"threads\": [", list(process.warnings));
  for (size_t i = 0; i < process.threads.size(); ++i) {
    const auto& thread = process.threads[i];
    fmt::print("{}\n      {{\"thread_id\": {}, \"native_id\": {}, \"name\": {}, \"gil\": {}, \"frames\": [",
               i ? "," : "", thread.thread_id, thread.native_id, quote(thread.name), thread.gil ? "true" : "false");
    for (size_t j = 0; j < thread.frames.size(); ++j) {
      const auto& frame = thread.frames[j];
      fmt::print("{}\n        {{\"kind\": \"{}\", \"function\": {}, \"qualname\": {}, \"file\": {}, \"line\": {}}}",
                 j ? "," : "", kind_name(frame.kind), quote(frame.function), quote(frame.qualname), quote(frame.file),
                 frame.line);
    }
    fmt::print("]}}");
  }
  fmt::print("]\n  }},\n");
}

int fail(const pyframes::Error& error) {
  fmt::print(stderr, "pyframes: {}{}\n", error.message, error.hint.empty() ? "" : " (" + error.hint + ")");
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(
        stderr,
        "usage: core_probe CORE [--stacks] [--exe PATH] [--lib-search DIR]... [--root DIR] [--read ADDR:SIZE]...\n");
    return 2;
  }
  std::string path = argv[1];
  pyframes::CoreOptions options;
  std::vector<std::pair<uint64_t, size_t>> reads;
  bool stacks = false;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--stacks") {
      stacks = true;
      continue;
    }
    if (i + 1 >= argc) {
      fmt::print(stderr, "core_probe: {} needs a value\n", arg);
      return 2;
    }
    std::string value = argv[++i];
    if (arg == "--exe") {
      options.executable = value;
    } else if (arg == "--lib-search") {
      options.lib_search.push_back(value);
    } else if (arg == "--root") {
      options.root = value;
    } else if (arg == "--read") {
      auto colon = value.find(':');
      reads.emplace_back(std::strtoull(value.c_str(), nullptr, 0), std::strtoul(value.c_str() + colon + 1, nullptr, 0));
    } else {
      fmt::print(stderr, "core_probe: unknown option {}\n", arg);
      return 2;
    }
  }

  std::optional<pyframes::Process> process;
  if (stacks) {
    auto read = pyframes::read_core(path, options);
    if (!read) return fail(read.error());
    process = std::move(*read);
  }
  auto core = pyframes::Core::open(path, options);
  if (!core) return fail(core.error());
  const pyframes::CoreInfo& info = (*core)->info();
  std::vector<std::string> read_results;
  for (const auto& [address, size] : reads) {
    std::vector<unsigned char> bytes(size);
    auto status = (*core)->memory().read(address, bytes.data(), size);
    std::string hex;
    if (status == pyframes::ReadStatus::Ok) {
      for (unsigned char b : bytes) hex += fmt::format("{:02x}", b);
    } else {
      hex = pyframes::to_string(status);
    }
    read_results.push_back(hex);
  }

  fmt::print("{{\n  \"pid\": {},\n  \"executable\": {},\n  \"short_name\": {},\n", info.pid, quote(info.executable),
             quote(info.short_name));
  fmt::print("  \"command_line\": {},\n  \"environment_size\": {},\n", list(info.command_line),
             info.environment.size());
  fmt::print("  \"fatal_signal\": {},\n", info.fatal_signal ? quote(info.fatal_signal->describe()) : "null");
  fmt::print("  \"gzip\": {},\n  \"missing_bytes\": {},\n", info.gzip ? "true" : "false", info.missing_bytes);
  fmt::print("  \"threads\": [");
  for (size_t i = 0; i < info.threads.size(); ++i) {
    const auto& t = info.threads[i];
    fmt::print("{}{{\"tid\": {}, \"signal\": {}, \"pc\": {}, \"sp\": {}, \"thread_pointer\": {}}}", i ? ", " : "",
               t.tid, t.current_signal, t.pc, t.sp, t.thread_pointer);
  }
  fmt::print("],\n  \"files\": {},\n", list((*core)->modules().files()));
  fmt::print("  \"reads\": {},\n", list(read_results));
  if (process) print_process(*process);
  fmt::print("  \"warnings\": {}\n}}\n", list((*core)->warnings()));
  return 0;
}
