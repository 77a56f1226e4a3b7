#include "report/inputs/load_inputs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "report/inputs/flight_recorder/fr_ledger.h"
#include "report/inputs/liveness.h"
#include "report/inputs/read_in_parallel.h"

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

// What a thread hands over from reading one ledger besides its view, which it fills in place.
struct LedgerLeftovers {
  std::optional<pyframes::Error> error;  // it could not be used
  PreparedRank prepared;                 // for finish_rank_view
};

// The part of reading a ledger that any thread may do: the copy, the parse, the trimmed view
// (all but its call-sites), whether its process still runs. What is left of the ledger is its
// records, for its reader to read the next one into.
void prepare_ledger(pyframes::Result<ledger::Ledger>& ledger, const LoadOptions& options, RankView& view,
                    LedgerLeftovers& left) {
  left.error.reset();
  if (!ledger) {
    left.error = ledger.take_error();
    return;
  }
  Liveness liveness = judge_liveness(ledger->header.host, ledger->header.pid, ledger->header.start_ns, options.here);
  prepare_rank_view(std::move(ledger.value()), options.view, view, left.prepared);
  view.liveness = liveness;
  if (liveness != Liveness::Unknown) view.judged_on = options.here;
  view.observed_ns = options.now_ns;
}

// The rest, on one thread in the ledgers' order: its error, or its call-sites interned. False
// when the ledger could not be used.
bool finish_ledger(const std::string& path, RankView& view, const LedgerLeftovers& left, Inputs& inputs,
                   const LoadOptions& options) {
  if (left.error) {
    inputs.errors.push_back({path, error_text(*left.error)});
    return false;
  }
  finish_rank_view(view, left.prepared, inputs, options.patterns);
  return true;
}

// Views in order of rank, each moved once: the order is found on (rank, index) pairs, then
// the views are moved along its cycles (a sort moving the views themselves moved each 17 times
// over 131 072 ranks, and a view is 856 bytes of strings and vectors).
void sort_by_rank(std::vector<RankView>& views) {
  std::vector<std::pair<int, uint32_t>> order;  // (rank, where that view is now), in the order wanted
  order.reserve(views.size());
  for (size_t i = 0; i < views.size(); ++i) order.emplace_back(views[i].rank, static_cast<uint32_t>(i));
  std::sort(order.begin(), order.end());
  std::vector<char> placed(views.size(), 0);
  for (size_t start = 0; start < views.size(); ++start) {
    if (placed[start] || order[start].second == start) continue;
    RankView first = std::move(views[start]);
    size_t at = start;
    while (true) {
      placed[at] = 1;
      size_t from = order[at].second;
      if (from == start) {
        views[at] = std::move(first);
        break;
      }
      views[at] = std::move(views[from]);
      at = from;
    }
  }
}

}  // namespace

// Past 99999 ranks, or 9 nodes, a byte-wise order had most of 131072 views moved into place
// after reading (sort_by_rank), 0.1 s on one thread.
bool natural_less(const std::string& a, const std::string& b) {
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  // The names of one directory share most of their bytes: skip what they share (a fast compare),
  // back to the start of the run of digits the first difference may be in.
  size_t shorter = std::min(a.size(), b.size());
  size_t same = 0;
  while (same < shorter && a[same] == b[same]) ++same;
  while (same > 0 && digit(a[same - 1])) --same;
  size_t i = same, j = same;
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t i_end = i, j_end = j;
      while (i_end < a.size() && digit(a[i_end])) ++i_end;
      while (j_end < b.size() && digit(b[j_end])) ++j_end;
      size_t i_first = i, j_first = j;  // past leading zeros
      while (i_first + 1 < i_end && a[i_first] == '0') ++i_first;
      while (j_first + 1 < j_end && b[j_first] == '0') ++j_first;
      size_t i_len = i_end - i_first, j_len = j_end - j_first;
      if (i_len != j_len) return i_len < j_len;
      if (int c = a.compare(i_first, i_len, b, j_first, j_len); c != 0) return c < 0;
      if (i_end - i != j_end - j) return i_end - i < j_end - j;  // 007 and 7: fewer digits first
      i = i_end;
      j = j_end;
      continue;
    }
    if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

void load_ledger_file(const std::string& path, Inputs& inputs, const LoadOptions& options) {
  // The ledger reader checks who could have written the file (trust.h) and copies only its
  // used parts with pread (snapshot.h): fast on thousands of ranks and safe against a file cut
  // by someone else while it is read.
  RankView view;
  LedgerLeftovers left;
  auto ledger = ledger::read_ledger_file(path);
  prepare_ledger(ledger, options, view, left);
  if (finish_ledger(path, view, left, inputs, options)) inputs.ranks.push_back(std::move(view));
}

void load_ledger_files(const std::vector<std::string>& paths, Inputs& inputs, const LoadOptions& options) {
  // A reader per thread: it keeps their directory open and reuses its copy's memory.
  size_t threads = reading_threads(options.threads, paths.size(), 32);
  std::vector<ledger::LedgerReader> readers(threads);
  constexpr size_t kBatch = 512;
  // One thread finishes each ledger right after preparing it: one slot, warm in the cache (1024
  // of them, each written once every 1024 ledgers, cost it 0.15 s of 2 over 131 072 ledgers).
  std::vector<LedgerLeftovers> slots(threads == 1 ? 1 : std::min(paths.size(), 2 * kBatch));
  // Each view is made where it stays (threads fill different ones); a ledger that cannot be
  // used leaves a hole, closed at the end.
  size_t first = inputs.ranks.size();
  inputs.ranks.resize(first + paths.size());
  std::vector<char> unusable(paths.size(), 0);
  read_in_parallel(
      paths.size(), threads, kBatch,
      [&](size_t worker, size_t i) {
        auto ledger = readers[worker].read(paths[i]);
        prepare_ledger(ledger, options, inputs.ranks[first + i], slots[i % slots.size()]);
        if (ledger) readers[worker].recycle(std::move(ledger->records));
      },
      [&](size_t i) {
        unusable[i] = !finish_ledger(paths[i], inputs.ranks[first + i], slots[i % slots.size()], inputs, options);
      });
  if (std::find(unusable.begin(), unusable.end(), 1) == unusable.end()) return;
  size_t kept = first;
  for (size_t i = 0; i < paths.size(); ++i) {
    if (unusable[i]) continue;
    if (kept != first + i) inputs.ranks[kept] = std::move(inputs.ranks[first + i]);
    ++kept;
  }
  inputs.ranks.resize(kept);
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
    std::sort(names.begin(), names.end(), natural_less);
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
    std::vector<std::string> exports;
    std::vector<std::string> ledgers;
    for (const auto& name : names) (ends_with(name, ".json") ? exports : ledgers).push_back(base + "/" + name);
    load_export_files(exports, inputs, options);
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

void load_paths(const std::vector<std::string>& paths, Inputs& inputs, const LoadOptions& options) {
  std::vector<std::string> run;  // consecutive export files, or consecutive ledger files
  bool run_of_exports = false;
  auto read_run = [&]() {
    if (run.empty()) return;
    if (run_of_exports) {
      load_export_files(run, inputs, options);
    } else {
      load_ledger_files(run, inputs, options);
    }
    run.clear();
  };
  for (const auto& path : paths) {
    struct stat st {};
    bool regular = ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
    bool is_export = regular && (ends_with(path, ".json") || looks_like_json(path));
    bool is_ledger = regular && !is_export && ends_with(path, ".ledger");
    if (!is_export && !is_ledger) {
      read_run();
      load_path(path, inputs, options);
      continue;
    }
    if (run_of_exports != is_export) read_run();
    run_of_exports = is_export;
    run.push_back(path);
  }
  read_run();
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
  // The usual case, every view with a rank of its own: sorted where they are. The views are
  // large (a report over 131 072 ranks holds 110 MiB of them): a second array of them, and a
  // map of every rank, were the report's peak of memory and a tenth of its allocations.
  {
    std::vector<int> ranks;
    ranks.reserve(inputs.ranks.size());
    for (const auto& view : inputs.ranks) ranks.push_back(view.rank);
    std::sort(ranks.begin(), ranks.end());
    if ((ranks.empty() || ranks.front() >= 0) && std::adjacent_find(ranks.begin(), ranks.end()) == ranks.end()) {
      sort_by_rank(inputs.ranks);
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
  sort_by_rank(kept);
  inputs.ranks = std::move(kept);
}

}  // namespace hangshim::report
