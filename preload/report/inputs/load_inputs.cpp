#include "report/inputs/load_inputs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>

#include <fmt/format.h>

#include "report/inputs/flight_recorder/fr_ledger.h"
#include "report/inputs/liveness.h"

namespace hangshim::report {

namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string error_text(const pyframes::Error& e) {
  return e.hint.empty() ? e.message : fmt::format("{} ({})", e.message, e.hint);
}

// First bytes of a file: a ledger starts with its magic, an export with '{'.
bool looks_like_json(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  char buf[64];
  ssize_t n = ::read(fd, buf, sizeof(buf));
  ::close(fd);
  for (ssize_t i = 0; i < n; ++i) {
    if (buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\t' || buf[i] == '\r') continue;
    return buf[i] == '{';
  }
  return false;
}

// Files named like the Flight Recorder dumps beside them (the same prefix, then a rank) that
// are no pickle: a dump cut to nothing, or overwritten. Each is one error, so a rank does not
// go missing without a word.
void report_damaged_dumps(const std::string& dir, const std::vector<std::string>& dumps,
                          const std::vector<std::string>& not_pickles, Inputs& inputs) {
  auto prefix_of = [](const std::string& name) {
    size_t end = name.size();
    while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9') --end;
    return name.substr(0, end);
  };
  std::set<std::string> prefixes;
  for (const auto& name : dumps) {
    if (flight_recorder::rank_from_file_name(name) >= 0) prefixes.insert(prefix_of(name));
  }
  for (const auto& name : not_pickles) {
    if (flight_recorder::rank_from_file_name(name) < 0 || prefixes.count(prefix_of(name)) == 0) continue;
    std::string file = dir + "/" + name;
    struct stat st {};
    std::string what = ::lstat(file.c_str(), &st) == 0 && st.st_size == 0
                           ? std::string("it is empty")
                           : std::string("it does not start as a pickle does (PROTO 2)");
    inputs.errors.push_back({file, fmt::format("{}: named like the Flight Recorder dumps beside it ({}<rank>) but not one: {} "
                                               "(the dump was cut or overwritten; take it again, or remove the file)",
                                               file, prefix_of(name), what)});
  }
}

}  // namespace

namespace {

void add_ledger(const std::string& path, pyframes::Result<ledger::Ledger>&& ledger, Inputs& inputs,
                const LoadOptions& options) {
  if (!ledger) {
    inputs.errors.push_back({path, error_text(ledger.error())});
    return;
  }
  std::string host = ledger->header.host;
  int64_t pid = ledger->header.pid;
  uint64_t start = ledger->header.start_ns;
  RankView view = make_rank_view(std::move(ledger.value()), inputs, options.patterns, options.view);
  view.liveness = judge_liveness(host, pid, start, options.here);
  if (view.liveness != Liveness::Unknown) view.judged_on = options.here;
  view.observed_ns = options.now_ns;
  inputs.ranks.push_back(std::move(view));
}

}  // namespace

void load_ledger_file(const std::string& path, Inputs& inputs, const LoadOptions& options) {
  // The ledger reader checks who could have written the file (trust.h) and copies only its
  // used parts with pread (snapshot.h): fast on thousands of ranks and safe against a file cut
  // by someone else while it is read.
  add_ledger(path, ledger::read_ledger_file(path), inputs, options);
}

void load_ledger_files(const std::vector<std::string>& paths, Inputs& inputs, const LoadOptions& options) {
  // One reader for all: it keeps their directory open and reuses its copy's memory.
  ledger::LedgerReader reader;
  inputs.ranks.reserve(inputs.ranks.size() + paths.size());
  for (const auto& path : paths) add_ledger(path, reader.read(path), inputs, options);
}

void load_path(const std::string& path, Inputs& inputs, const LoadOptions& options) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    inputs.errors.push_back({path, fmt::format("cannot read {}: {} (name a ledger directory, a .ledger file or an export)",
                                               path, std::strerror(errno))});
    return;
  }
  if (S_ISDIR(st.st_mode)) {
    DIR* dir = ::opendir(path.c_str());
    if (dir == nullptr) {
      inputs.errors.push_back({path, fmt::format("cannot list {}: {}", path, std::strerror(errno))});
      return;
    }
    std::vector<std::string> names;
    std::vector<std::string> others;  // maybe Flight Recorder dumps: their names are the job's choice
    while (dirent* entry = ::readdir(dir)) {
      std::string name = entry->d_name;
      if (ends_with(name, ".ledger") || ends_with(name, ".json")) {
        names.push_back(name);
      } else if (name != "." && name != ".." && !ends_with(name, ".txt") && !ends_with(name, ".tmp")) {
        others.push_back(name);
      }
    }
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    std::sort(others.begin(), others.end());
    std::string base = path.size() > 1 && path.back() == '/' ? path.substr(0, path.size() - 1) : path;
    // Dumps are found by what they hold (a pickle), never by their names alone.
    std::vector<std::string> dumps;
    std::vector<std::string> not_pickles;
    for (const auto& name : others) {
      std::string file = base + "/" + name;
      struct stat fst {};
      if (::lstat(file.c_str(), &fst) != 0 || !S_ISREG(fst.st_mode)) continue;
      (looks_like_pickle(file) ? dumps : not_pickles).push_back(name);
    }
    if (names.empty() && dumps.empty()) {
      inputs.warnings.push_back(fmt::format("{}: no ledgers (*.ledger), exports (*.json) or Flight Recorder dumps in it", path));
    }
    std::vector<std::string> ledgers;
    for (const auto& name : names) {
      std::string file = base + "/" + name;
      if (ends_with(name, ".json")) {
        load_export_file(file, inputs, options);
      } else {
        ledgers.push_back(std::move(file));
      }
    }
    load_ledger_files(ledgers, inputs, options);
    for (const auto& name : dumps) load_flight_recorder_file(base + "/" + name, inputs, options);
    report_damaged_dumps(base, dumps, not_pickles, inputs);
    return;
  }
  if (S_ISREG(st.st_mode) && (ends_with(path, ".json") || looks_like_json(path))) {
    load_export_file(path, inputs, options);
    return;
  }
  if (S_ISREG(st.st_mode) && looks_like_pickle(path)) {
    load_flight_recorder_file(path, inputs, options);
    return;
  }
  load_ledger_file(path, inputs, options);  // the reader names links and non-files precisely
}

void settle_inputs(Inputs& inputs, const JobSelection& selection, const std::string& here) {
  std::string error;
  if (!select_job(inputs.ranks, selection, here, inputs.job, inputs.other_jobs, error)) {
    inputs.errors.push_back({"--job", error});
    return;
  }
  // One process and no rank: a single-process job (ncclCommInitAll over all its GPUs, or a
  // program that never set RANK); it is the whole job, so it is read as rank 0.
  if (inputs.ranks.size() == 1 && inputs.ranks[0].rank < 0) {
    RankView& only = inputs.ranks[0];
    only.rank = 0;
    inputs.warnings.push_back(fmt::format("{}: pid {} on {} has no RANK variable; read as the only process of its job (rank 0)",
                                          only.source, only.header.pid, only.header.host));
  }
  auto by_rank_order = [](const RankView& a, const RankView& b) { return a.rank < b.rank; };
  // The usual case, every view with a rank of its own: sorted where they are. The views are
  // large (a report over 131 072 ranks holds 110 MiB of them): a second array of them, and a
  // map of every rank, were the report's peak of memory and a tenth of its allocations.
  {
    std::vector<int> ranks;
    ranks.reserve(inputs.ranks.size());
    for (const auto& view : inputs.ranks) ranks.push_back(view.rank);
    std::sort(ranks.begin(), ranks.end());
    if ((ranks.empty() || ranks.front() >= 0) && std::adjacent_find(ranks.begin(), ranks.end()) == ranks.end()) {
      std::sort(inputs.ranks.begin(), inputs.ranks.end(), by_rank_order);
      return;
    }
  }
  std::vector<RankView> kept;
  kept.reserve(inputs.ranks.size());
  std::map<int, size_t> by_rank;
  for (auto& view : inputs.ranks) {
    if (view.rank < 0) {
      inputs.warnings.push_back(fmt::format("{}: pid {} on {} has no rank (no RANK variable, no communicator); ignored",
                                            view.source, view.header.pid, view.header.host));
      continue;
    }
    auto it = by_rank.find(view.rank);
    if (it == by_rank.end()) {
      by_rank.emplace(view.rank, kept.size());
      kept.push_back(std::move(view));
      continue;
    }
    RankView& other = kept[it->second];
    bool same_process = other.header.host == view.header.host && other.header.pid == view.header.pid &&
                        other.header.start_ns == view.header.start_ns;
    // The same ledger twice (a directory and an export of it): keep the later reading. Two
    // processes with one rank: an earlier run's ledger left in the directory; keep the newest.
    bool newer = same_process ? view.observed_ns > other.observed_ns || view.header.ring_head > other.header.ring_head
                              : view.header.start_ns > other.header.start_ns;
    const RankView& dropped = newer ? other : view;
    inputs.warnings.push_back(
        same_process ? fmt::format("rank {}: {} and {} are the same ledger; using one", view.rank, other.source, view.source)
                     : fmt::format("rank {}: ignored {} (pid {} on {}), an older process than {}", view.rank,
                                   dropped.source, dropped.header.pid, dropped.header.host,
                                   newer ? view.source : other.source));
    if (newer) other = std::move(view);
  }
  std::sort(kept.begin(), kept.end(), by_rank_order);
  inputs.ranks = std::move(kept);
}

}  // namespace hangshim::report
