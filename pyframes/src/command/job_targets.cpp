#include "command/job_targets.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>

#include "native/carried_frames.h"
#include "pyframes/json_reader.h"
#include "select/process_select.h"

namespace pyframes::cli {

namespace {

constexpr const char* kProgram = "pyframes";
constexpr size_t kMaxDumpBytes = size_t{1} << 30;

Result<std::string> read_whole_file(const std::string& path) {
  const bool standard_input = path == "-";
  int fd = standard_input ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int error = errno;
    return make_error(error == ENOENT ? ErrorKind::NotFound : error == EACCES ? ErrorKind::PermissionDenied : ErrorKind::Io,
                      fmt::format("cannot open {}: {}", path, std::strerror(error)), "pass a file saved from pyframes --json");
  }
  if (!standard_input) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);  // O_NONBLOCK only kept open() of a FIFO from blocking
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int error = errno;
      if (!standard_input) ::close(fd);
      return make_error(ErrorKind::Io, fmt::format("cannot read {}: {}", path, std::strerror(error)),
                        "pass a file saved from pyframes --json");
    }
    if (got == 0) break;
    text.append(buffer, static_cast<size_t>(got));
    if (text.size() > kMaxDumpBytes) {
      if (!standard_input) ::close(fd);
      return make_error(ErrorKind::Usage, fmt::format("{} is larger than {} MiB", path, kMaxDumpBytes >> 20),
                        "pass the documents pyframes --json wrote, not some other file");
    }
  }
  if (!standard_input) ::close(fd);
  return text;
}

void add_unique(Selection& selection, Target target, bool found) {
  for (const Target& known : selection.targets) {
    if (known == target) return;
  }
  selection.targets.push_back(std::move(target));
  selection.found.push_back(found);
}

void report(Output& output, const std::string& what, const Error& error, int& status) {
  output.err += format_error_line(kProgram, what, error) + "\n";
  if (status != kExitUsage) status = error.kind == ErrorKind::Usage ? kExitUsage : kExitTargetProblem;
}

}  // namespace

Sources live_sources() {
  Sources sources;
  sources.children = live_descendants;
  sources.matching = [](const std::string& pattern) { return processes_matching(pattern, ::getpid()); };
  sources.read_file = read_whole_file;
  return sources;
}

Selection select_targets(const Options& options, const Sources& sources, Output& output) {
  Selection selection;
  for (const Target& target : options.targets) add_unique(selection, target, false);
  for (int64_t launcher : options.children_of) {
    auto children = sources.children(launcher);
    if (!children) {
      report(output, fmt::format("--children {}", launcher), children.error(), selection.status);
      continue;
    }
    for (int64_t pid : *children) add_unique(selection, Target{pid, {}}, true);
  }
  for (const std::string& pattern : options.patterns) {
    auto matches = sources.matching(pattern);
    if (!matches) {
      report(output, fmt::format("--pgrep {}", pattern), matches.error(), selection.status);
      continue;
    }
    for (int64_t pid : *matches) add_unique(selection, Target{pid, {}}, true);
  }
  return selection;
}

bool quietly_skipped(const Error& error) {
  return error.kind == ErrorKind::NotPython || error.kind == ErrorKind::NotFound ||
         error.kind == ErrorKind::ProcessGone;
}

int load_json_dumps(const std::vector<std::string>& files, const Sources& sources, std::vector<Process>& processes,
                    std::vector<FailedTarget>& failures, Output& output) {
  int status = kExitOk;
  for (const std::string& file : files) {
    const std::string name = file == "-" ? std::string("standard input") : file;
    auto fail = [&](const Error& error) {
      report(output, name, error, status);
      failures.push_back(FailedTarget{0, name, error});
    };
    auto text = sources.read_file(file);
    if (!text) {
      fail(text.error());
      continue;
    }
    auto documents = parse_json_stream(*text);
    if (!documents) {
      fail(documents.error());
      continue;
    }
    for (const JsonValue& document : *documents) {
      auto dump = dump_from_json(document);
      if (!dump) {
        fail(dump.error());
        break;
      }
      for (size_t i = 0; i < dump->processes.size(); ++i) {
        Process& process = dump->processes[i];
        native::name_carried_native_frames(process, dump->mappings[i]);
        // Saved from a live process, the data now comes from the file: its /proc is not ours.
        if (process.source.empty() || process.source.rfind("pid ", 0) == 0) process.source = name;
        processes.push_back(std::move(process));
      }
      for (FailedTarget& failure : dump->failures) {  // targets the saved run could not read
        failure.target = fmt::format("{} (in {})", failure.target, name);
        report(output, failure.target, failure.error, status);
        failures.push_back(std::move(failure));
      }
    }
  }
  return status;
}

}  // namespace pyframes::cli
