// Test driver for the core-file integration tests: opens a core with the pyframes core API and
// prints, as JSON, what the core says (pid, executable, argv, fatal signal, threads, warnings).
//   core_probe CORE [--exe PATH] [--lib-search DIR]... [--root DIR] [--read ADDRESS:SIZE]...
// --read prints the bytes at ADDRESS as hex (to compare memory with the files it came from).
// Errors: one line `pyframes: <message> (<hint>)` on stderr, exit 1; bad usage exits 2.
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
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

int fail(const pyframes::Error& error) {
  fmt::print(stderr, "pyframes: {}{}\n", error.message, error.hint.empty() ? "" : " (" + error.hint + ")");
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr,
               "usage: core_probe CORE [--exe PATH] [--lib-search DIR]... [--root DIR] [--read ADDR:SIZE]...\n");
    return 2;
  }
  std::string path = argv[1];
  pyframes::CoreOptions options;
  std::vector<std::pair<uint64_t, size_t>> reads;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
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
  fmt::print("  \"warnings\": {}\n}}\n", list((*core)->warnings()));
  return 0;
}
