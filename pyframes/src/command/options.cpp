#include "command/options.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "pyframes/versions.h"

namespace pyframes::cli {

namespace {

constexpr int64_t kPidMaxLimit = 4194304;  // PID_MAX_LIMIT on 64-bit Linux

Error usage(std::string message) { return make_error(ErrorKind::Usage, std::move(message), "see pyframes --help"); }

const OptionSpec* find_option(std::string_view spelling) {
  for (const OptionSpec& spec : option_specs()) {
    if (spelling == spec.name || (!spec.short_name.empty() && spelling == spec.short_name)) return &spec;
  }
  return nullptr;
}

void add_target(Options& options, Target target) {
  if (std::find(options.targets.begin(), options.targets.end(), target) == options.targets.end()) {
    options.targets.push_back(std::move(target));
  }
}

bool is_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A positional argument: digits are a PID, anything else names a core file. A missing or
// unreadable file is that target's problem (exit 1, one line), like a PID that is gone.
Result<Target> parse_target(std::string_view text) {
  if (!is_digits(text)) return Target{0, std::string(text)};
  auto pid = parse_pid(text);
  if (!pid) return pid.take_error();
  return Target{*pid, {}};
}

// A PID-valued option: the reason it is not one, or empty.
std::string add_number(std::vector<int64_t>& to, std::string_view value) {
  auto pid = parse_pid(value);
  if (!pid) return pid.error().message;
  to.push_back(*pid);
  return {};
}

// The options that only switch something on: one function per field, so they fit OptionSpec::apply.
template <bool Options::*flag>
std::string set_flag(Options& options, std::string_view) {
  options.*flag = true;
  return {};
}

template <MergeMode mode>
std::string set_merge(Options& options, std::string_view) {
  options.merge = mode;
  return {};
}

}  // namespace

const std::vector<OptionSpec>& option_specs() {
  static const std::vector<OptionSpec> specs = {
      {"--json", "", "", "print one JSON document instead of text",
       set_flag<&Options::json>},
      {"--lock", "", "", "pause the target while reading, for a consistent snapshot (always resumed)",
       set_flag<&Options::lock>},
      {"--native", "", "", "also C/C++ frames, merged with the Python frames (stops a live target for the unwind); with --merge-json: merge the native frames the documents' threads carry (a debugger's)",
       set_flag<&Options::native>},
      {"--native-all", "", "", "--native, and also threads that run no Python code",
       [](Options& o, std::string_view) { o.native = o.native_all = true; return std::string(); }},
      {"--children", "", "PID", "read every Python process descended from PID (a launcher: torchrun, srun, ...)",
       [](Options& o, std::string_view value) { return add_number(o.children_of, value); }},
      {"--pgrep", "", "PATTERN", "read every Python process whose command line matches PATTERN (like pgrep -f)",
       [](Options& o, std::string_view value) {
         if (value.empty()) return std::string("an empty pattern matches every process");
         o.patterns.emplace_back(value);
         return std::string();
       }},
      {"--merge", "", "", "merge the stacks into one tree labelled by rank (default with several processes)",
       set_merge<MergeMode::Always>},
      {"--no-merge", "", "", "print every process on its own, even with several",
       set_merge<MergeMode::Never>},
      {"--all-threads", "", "", "merge every thread, not only the main thread of each process",
       set_flag<&Options::all_threads>},
      {"--locals", "", "", "show the arguments and local variables of every frame (bounded)",
       set_flag<&Options::locals>},
      {"--globals", "", "", "also each frame's module globals (text and JSON) and builtins (JSON): what gdb's py-print reads",
       set_flag<&Options::globals>},
      {"--idle", "", "", "show idle threads too (py-spy's --idle): the default, idle threads are never hidden unless --hide-idle",
       set_flag<&Options::show_idle>},
      {"--hide-idle", "", "", "hide idle threads, except the main thread, the only Python thread and threads in a collective",
       set_flag<&Options::hide_idle>},
      {"--merge-json", "", "", "the targets are files saved from pyframes --json ('-': stdin): merge them",
       set_flag<&Options::from_json>},
      {"--exe", "", "PATH", "cores: the executable that wrote the core, when not at its original path",
       [](Options& o, std::string_view v) { o.core_executable = v; return std::string(); }},
      {"--lib-search", "", "DIR", "cores: a directory to look for moved files in (repeatable)",
       [](Options& o, std::string_view v) { o.lib_search.emplace_back(v); return std::string(); }},
      {"--root", "", "DIR", "cores: prefix for every path the core names (a container root, a copied file system)",
       [](Options& o, std::string_view v) { o.root = v; return std::string(); }},
      {"--help", "-h", "", "show this help and exit",
       [](Options& o, std::string_view) { o.action = Action::Help; return std::string(); }},
      {"--version", "-V", "", "print the version and exit",
       [](Options& o, std::string_view) {
         if (o.action != Action::Help) o.action = Action::Version;
         return std::string();
       }},
  };
  return specs;
}

std::string Target::name() const {
  return is_core() ? fmt::format("core {}", core_path) : fmt::format("process {}", pid);
}

Result<int64_t> parse_pid(std::string_view text) {
  int64_t pid = 0;
  const bool digits = is_digits(text);
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), pid);
  if (!digits || ec != std::errc() || end != text.data() + text.size() || pid <= 0 || pid > kPidMaxLimit) {
    return usage(fmt::format("'{}' is not a PID (a number from 1 to {})", text, kPidMaxLimit));
  }
  return pid;
}

Result<Options> parse_options(const std::vector<std::string>& args) {
  Options options;
  std::vector<std::string_view> targets;
  bool options_ended = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (options_ended || arg.size() < 2 || arg.front() != '-') {
      targets.push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_ended = true;
      continue;
    }
    // "--name=value" or "--name value" for options that take a value.
    const size_t equals = arg.rfind("--", 0) == 0 ? arg.find('=') : std::string_view::npos;
    const std::string_view spelling = arg.substr(0, equals);
    const OptionSpec* spec = find_option(spelling);
    if (spec == nullptr) return usage(fmt::format("unknown option '{}'", arg));
    std::string_view value;
    if (spec->value_name.empty()) {
      if (equals != std::string_view::npos) return usage(fmt::format("option '{}' takes no value", spelling));
    } else if (equals != std::string_view::npos) {
      value = arg.substr(equals + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return usage(fmt::format("option '{}' needs a value ({})", spelling, spec->value_name));
    }
    if (std::string problem = spec->apply(options, value); !problem.empty()) {
      return usage(fmt::format("bad value for '{}': {}", spelling, problem));
    }
  }
  if (options.action != Action::Dump) return options;
  if (options.show_idle && options.hide_idle) return usage("--idle shows idle threads, --hide-idle hides them: pick one");
  if (options.from_json) {
    if (!options.children_of.empty() || !options.patterns.empty() || options.lock || options.locals ||
        options.globals) {
      return usage("--merge-json reads saved documents: --children, --pgrep, --lock, --locals and --globals do not apply");
    }
    options.json_files.assign(targets.begin(), targets.end());
    if (options.json_files.empty()) return usage("no file given (usage: pyframes --merge-json FILE...)");
    return options;
  }
  for (std::string_view text : targets) {
    auto target = parse_target(text);
    if (!target) return target.take_error();
    add_target(options, std::move(*target));
  }
  if (options.targets.empty() && options.children_of.empty() && options.patterns.empty()) {
    return usage("no PID or core file given (usage: pyframes [options] PID|CORE..., --children PID or --pgrep PATTERN)");
  }
  return options;
}

std::string help_text() {
  std::string text =
      "Usage: pyframes [options] PID|CORE...\n"
      "       pyframes [options] --children LAUNCHER_PID | --pgrep PATTERN\n"
      "       pyframes [options] --merge-json FILE...\n"
      "\n"
      "Print the Python stacks of running CPython " PYFRAMES_CPYTHON_RANGE " processes and of core files (gcore,\n"
      "kernel dumps, gzip-compressed), innermost frame first, without debug symbols and without\n"
      "stopping the processes. Several targets are read in parallel and merged into one tree,\n"
      "outermost frame first, whose branches name the ranks (RANK from the environment) or pids\n"
      "that took them, outliers first.\n"
      "\n"
      "Options:\n";
  for (const OptionSpec& spec : option_specs()) {
    std::string spelling = spec.short_name.empty() ? fmt::format("    {}", spec.name)
                                                   : fmt::format("{}, {}", spec.short_name, spec.name);
    if (!spec.value_name.empty()) spelling += fmt::format(" {}", spec.value_name);
    text += fmt::format("  {:<22}{}\n", spelling, spec.help);
  }
  text +=
      "\n"
      "Exit status: 0 every target was read; 1 a target could not be read or its stack was cut\n"
      "short (one line on stderr for each); 2 usage error.\n"
      "Colour is used only when stdout is a terminal and NO_COLOR is not set.\n";
  return text;
}

std::string version_text(std::string_view version) {
  return fmt::format("pyframes {} (reads CPython " PYFRAMES_CPYTHON_RANGE " and the free-threaded " PYFRAMES_CPYTHON_FREE_THREADED ")\n",
                     version);
}

}  // namespace pyframes::cli
