#include "cli_support/options.h"

#include <fmt/format.h>

#include <sys/stat.h>

#include <algorithm>
#include <charconv>

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

bool is_regular_file(std::string_view path) {
  struct stat st {};
  return ::stat(std::string(path).c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// A positional argument: digits are a PID, an existing file is a core; anything else is a
// typo worth a usage error before any target is read.
Result<Target> parse_target(std::string_view text) {
  if (is_digits(text)) {
    auto pid = parse_pid(text);
    if (!pid) return pid.take_error();
    return Target{*pid, {}};
  }
  if (!is_regular_file(text)) {
    return usage(fmt::format("'{}' is neither a PID nor a core file (no such file)", text));
  }
  return Target{0, std::string(text)};
}

}  // namespace

const std::vector<OptionSpec>& option_specs() {
  static const std::vector<OptionSpec> specs = {
      {"--json", "", "", "print one JSON document instead of text",
       [](Options& o, std::string_view) { o.json = true; return std::string(); }},
      {"--lock", "", "", "pause the target while reading, for a consistent snapshot (always resumed)",
       [](Options& o, std::string_view) { o.lock = true; return std::string(); }},
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
  for (std::string_view text : targets) {
    auto target = parse_target(text);
    if (!target) return target.take_error();
    add_target(options, std::move(*target));
  }
  if (options.targets.empty()) return usage("no PID or core file given (usage: pyframes [options] PID|CORE...)");
  return options;
}

std::string help_text() {
  std::string text =
      "Usage: pyframes [options] PID|CORE...\n"
      "\n"
      "Print the Python stacks of running CPython 3.6-3.14 processes and of core files (gcore,\n"
      "kernel dumps, gzip-compressed), innermost frame first, without debug symbols and without\n"
      "stopping the processes. Several targets are read in parallel.\n"
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
  return fmt::format("pyframes {} (reads CPython 3.6-3.14)\n", version);
}

}  // namespace pyframes::cli
