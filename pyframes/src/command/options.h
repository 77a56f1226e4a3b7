// Command-line options of `pyframes`, parsed from a table so that a new option is one entry:
// its spellings, its value (if any), its help line and what it sets in Options. Positional
// arguments are targets: PIDs of live processes and core files, or with --merge-json the files of
// saved --json documents.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pyframes/result.h"

namespace pyframes::cli {

enum class Action { Dump, Help, Version };

// Whether the stacks of several processes are merged into one tree (--merge, --no-merge).
enum class MergeMode { Auto, Always, Never };

// One thing to read: a live process (digits) or a core file (anything else that is a file).
struct Target {
  int64_t pid = 0;        // live process; 0 for a core
  std::string core_path;  // core file; empty for a live process
  bool is_core() const { return !core_path.empty(); }
  std::string name() const;  // "process 1234" / "core core.1234", for error lines
  bool operator==(const Target&) const = default;
};

struct Options {
  Action action = Action::Dump;
  std::vector<Target> targets;  // in the order given, duplicates removed
  bool json = false;
  bool lock = false;
  bool native = false;      // --native: C/C++ frames merged with the Python frames
  bool native_all = false;  // --native-all: also threads without Python state
  // Whole jobs: processes chosen by launcher (--children) or command line (--pgrep).
  std::vector<int64_t> children_of;
  std::vector<std::string> patterns;
  MergeMode merge = MergeMode::Auto;
  bool all_threads = false;
  bool locals = false;
  bool globals = false;
  bool hide_idle = false;  // --hide-idle
  bool show_idle = false;  // --idle (py-spy's spelling): idle threads shown, as by default
  bool from_json = false;               // --merge-json: the targets are saved --json documents
  std::vector<std::string> json_files;  // their paths ("-" is stdin), in the order given
  // Core files only: where to find the files a core names (see pyframes/core.h).
  std::string core_executable;          // --exe
  std::vector<std::string> lib_search;  // --lib-search, repeatable
  std::string root;                     // --root
};

struct OptionSpec {
  std::string_view name;        // "--json"
  std::string_view short_name;  // "-h", or empty
  std::string_view value_name;  // empty for a flag; "PATTERN" for an option with a value
  std::string_view help;        // one line for --help and docs/pyframes.md
  // Applies the option; returns an error message for a bad value, empty when fine.
  std::string (*apply)(Options& options, std::string_view value);
};

// Every option, in the order --help lists them.
const std::vector<OptionSpec>& option_specs();

// Parses the arguments after the program name. Errors are ErrorKind::Usage with a message
// naming the bad argument; "--help" or "--version" anywhere wins over missing targets.
Result<Options> parse_options(const std::vector<std::string>& args);

// A PID as given on the command line: decimal digits only, 1..4194304 (Linux's PID_MAX_LIMIT).
Result<int64_t> parse_pid(std::string_view text);

std::string help_text();
std::string version_text(std::string_view version);  // "pyframes 0.1.0 (...)"

}  // namespace pyframes::cli
