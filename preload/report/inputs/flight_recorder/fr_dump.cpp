#include "report/inputs/flight_recorder/fr_dump.h"

#include <algorithm>
#include <charconv>
#include <tuple>
#include <limits>
#include <set>

#include <fmt/format.h>

namespace hangshim::report::flight_recorder {

using pickle::Document;
using pickle::Kind;
using pickle::ValueId;

namespace {

constexpr const char* kWhatADumpIs =
    "a dump is a pickled dict with \"version\" and \"entries\", one file per rank as PyTorch writes them";

uint64_t saturating_add(uint64_t a, uint64_t b) {
  return a > std::numeric_limits<uint64_t>::max() - b ? std::numeric_limits<uint64_t>::max() : a + b;
}

uint64_t saturating_mul(uint64_t a, uint64_t b) {
  return b != 0 && a > std::numeric_limits<uint64_t>::max() / b ? std::numeric_limits<uint64_t>::max() : a * b;
}

// Walks the values with a budget of work: the memo can make one large value reachable from
// every entry, and a walk that followed each reference in full would take the square of the
// file's size. A real dump shares little (its strings, and frames between entries); one that
// needs more work than a small multiple of its size is damaged or built to stall a reader.
class Walk {
 public:
  Walk(const Document& doc, uint64_t budget) : doc_(doc), budget_(budget) {}

  bool exhausted() const { return exhausted_; }
  const Document& doc() const { return doc_; }

  std::span<const ValueId> items(ValueId v) {
    auto items = doc_.items(v);
    return spend(items.size() + 1) ? items : std::span<const ValueId>();
  }
  std::optional<ValueId> get(ValueId dict, std::string_view key) {
    if (!spend(doc_.items(dict).size() / 2 + 1)) return std::nullopt;
    return doc_.find(dict, key);
  }
  // A value of the kind wanted, else nullopt (absent, or another kind).
  std::optional<ValueId> get(ValueId dict, std::string_view key, Kind kind) {
    auto v = get(dict, key);
    return v && doc_.is(*v, kind) ? v : std::nullopt;
  }
  std::optional<std::string_view> text(ValueId dict, std::string_view key) {
    auto v = get(dict, key, Kind::String);
    return v ? std::optional<std::string_view>(doc_.string(*v)) : std::nullopt;
  }
  std::optional<int64_t> integer(ValueId dict, std::string_view key) {
    auto v = get(dict, key, Kind::Int);
    return v ? std::optional<int64_t>(doc_.integer(*v)) : std::nullopt;
  }
  bool spend(uint64_t units) {
    if (exhausted_ || units > budget_) {
      exhausted_ = true;
      budget_ = 0;
      return false;
    }
    budget_ -= units;
    return true;
  }

 private:
  const Document& doc_;
  uint64_t budget_;
  bool exhausted_ = false;
};

// "[0, 1, 2]" (getPgConfig's ranks_str; some versions join with "," alone), or a list of ints.
bool parse_ranks(Walk& walk, ValueId v, std::vector<int32_t>& out) {
  const Document& doc = walk.doc();
  if (doc.is(v, Kind::List) || doc.is(v, Kind::Tuple)) {
    for (ValueId item : walk.items(v)) {
      if (!doc.is(item, Kind::Int) || doc.integer(item) < 0 || doc.integer(item) >= ledger::kMaxRanks) return false;
      out.push_back(static_cast<int32_t>(doc.integer(item)));
    }
    return !walk.exhausted();
  }
  if (!doc.is(v, Kind::String)) return false;
  std::string_view s = doc.string(v);
  if (!walk.spend(s.size())) return false;
  auto skip_spaces = [&]() {
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  };
  skip_spaces();
  if (s.empty() || s.front() != '[') return false;
  s.remove_prefix(1);
  skip_spaces();
  if (!s.empty() && s.front() == ']') return s.size() == 1;
  while (true) {
    skip_spaces();
    int32_t rank = -1;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), rank);
    if (ec != std::errc() || rank < 0 || rank >= ledger::kMaxRanks) return false;
    out.push_back(rank);
    s.remove_prefix(static_cast<size_t>(end - s.data()));
    skip_spaces();
    if (s.empty()) return false;
    char c = s.front();
    s.remove_prefix(1);
    if (c == ']') return s.find_first_not_of(' ') == std::string_view::npos;
    if (c != ',') return false;
  }
}

// The elements of the tensors whose sizes are listed ([[3, 4], [5]]: 17), saturating; nullopt
// for sizes that are no list of lists of non-negative ints.
std::optional<uint64_t> elements(Walk& walk, ValueId sizes) {
  const Document& doc = walk.doc();
  if (!doc.is(sizes, Kind::List) && !doc.is(sizes, Kind::Tuple)) return std::nullopt;
  uint64_t total = 0;
  for (ValueId tensor : walk.items(sizes)) {
    if (!doc.is(tensor, Kind::List) && !doc.is(tensor, Kind::Tuple)) return std::nullopt;
    uint64_t numel = 1;
    for (ValueId dim : walk.items(tensor)) {
      if (!doc.is(dim, Kind::Int) || doc.integer(dim) < 0) return std::nullopt;
      numel = saturating_mul(numel, static_cast<uint64_t>(doc.integer(dim)));
    }
    total = saturating_add(total, numel);
  }
  return total;
}

std::string first_dtype(Walk& walk, ValueId entry, std::string_view key) {
  auto list = walk.get(entry, key, Kind::List);
  if (!list) return {};
  auto items = walk.items(*list);
  return !items.empty() && walk.doc().is(items[0], Kind::String) ? std::string(walk.doc().string(items[0])) : std::string();
}

void read_frames(Walk& walk, ValueId list, Entry& e) {
  const Document& doc = walk.doc();
  for (ValueId f : walk.items(list)) {
    if (e.frames.size() == kMaxFrames) {
      e.frames_cut = true;
      break;
    }
    if (!doc.is(f, Kind::Dict)) continue;
    Frame frame;
    frame.function = std::string(walk.text(f, "name").value_or(""));
    frame.file = std::string(walk.text(f, "filename").value_or(""));
    int64_t line = walk.integer(f, "line").value_or(0);
    frame.line = line >= 0 && line <= std::numeric_limits<int32_t>::max() ? static_cast<int32_t>(line) : 0;
    e.frames.push_back(std::move(frame));
  }
}

// One entry, or why it cannot be used.
std::optional<std::string> read_entry(Walk& walk, ValueId v, Entry& e) {
  const Document& doc = walk.doc();
  if (!doc.is(v, Kind::Dict)) return fmt::format("a {}, not a dict", pickle::kind_name(doc.kind(v)));
  auto name = walk.text(v, "profiling_name");
  if (!name) return std::string("no \"profiling_name\"");
  e.profiling_name = std::string(*name);
  auto op = parse_profiling_name(*name);
  if (!op) return fmt::format("\"{}\" is no operation hangshim follows", *name);
  e.op = *op;
  auto group = walk.get(v, "process_group");
  auto group_items = group ? walk.items(*group) : std::span<const ValueId>();
  if (group_items.empty() || !doc.is(group_items[0], Kind::String)) return std::string("no \"process_group\" (name, desc)");
  e.pg_name = std::string(doc.string(group_items[0]));
  auto seq = walk.integer(v, "collective_seq_id");
  if (!seq || *seq < 0) return std::string("no \"collective_seq_id\"");
  e.collective_seq_id = static_cast<uint64_t>(*seq);
  e.p2p_seq_id = static_cast<uint64_t>(std::max<int64_t>(walk.integer(v, "p2p_seq_id").value_or(0), 0));
  auto state = walk.text(v, "state");
  if (!state) return std::string("no \"state\"");
  if (*state == "completed") {
    e.state = EntryState::Completed;
  } else if (*state == "started") {
    e.state = EntryState::Started;
  } else if (*state == "scheduled") {
    e.state = EntryState::Scheduled;
  } else {
    return fmt::format("state \"{}\" (scheduled, started or completed expected)", *state);
  }
  auto p2p = walk.get(v, "is_p2p", Kind::Bool);
  e.is_p2p = p2p ? doc.boolean(*p2p) : (e.op.op == ledger::Op::Send || e.op.op == ledger::Op::Recv);
  e.record_id = walk.integer(v, "record_id").value_or(-1);
  e.pg_id = walk.integer(v, "pg_id").value_or(-1);
  e.time_created_ns = static_cast<uint64_t>(std::max<int64_t>(walk.integer(v, "time_created_ns").value_or(0), 0));
  e.time_discovered_completed_ns =
      static_cast<uint64_t>(std::max<int64_t>(walk.integer(v, "time_discovered_completed_ns").value_or(0), 0));
  auto retired = walk.get(v, "retired", Kind::Bool);
  e.retired = retired && doc.boolean(*retired);
  for (auto [key, out] : {std::pair{"input_sizes", &e.input_elements}, std::pair{"output_sizes", &e.output_elements}}) {
    auto sizes = walk.get(v, key);
    if (!sizes) continue;
    auto n = elements(walk, *sizes);
    if (!n) return fmt::format("\"{}\" that is no list of tensor sizes", key);
    *out = *n;
  }
  e.dtype = first_dtype(walk, v, "input_dtypes");
  if (e.dtype.empty()) e.dtype = first_dtype(walk, v, "output_dtypes");
  if (auto frames = walk.get(v, "frames", Kind::List)) read_frames(walk, *frames, e);
  return std::nullopt;
}

bool parse_version(std::string_view text, int& major, int& minor) {
  size_t dot = text.find('.');
  if (dot == std::string_view::npos) return false;
  auto [e1, c1] = std::from_chars(text.data(), text.data() + dot, major);
  auto [e2, c2] = std::from_chars(text.data() + dot + 1, text.data() + text.size(), minor);
  return c1 == std::errc() && c2 == std::errc() && e1 == text.data() + dot && e2 == text.data() + text.size();
}

pyframes::Error not_a_dump(std::string what, std::string hint = kWhatADumpIs) {
  return pyframes::make_error(pyframes::ErrorKind::Corrupt, std::move(what), std::move(hint));
}

}  // namespace

pyframes::Result<Dump> read_dump(const Document& doc, size_t source_bytes) {
  Walk walk(doc, saturating_add(saturating_mul(source_bytes, 64), 1u << 20));
  ValueId root = doc.root();
  if (!doc.is(root, Kind::Dict)) {
    return not_a_dump(fmt::format("a pickle of a {}, not a Flight Recorder dump", pickle::kind_name(doc.kind(root))));
  }
  auto version = walk.get(root, "version");
  auto entries = walk.get(root, "entries");
  if (!version || !entries) {
    return not_a_dump(fmt::format("a pickled dict without {}, not a Flight Recorder dump", !version ? "\"version\"" : "\"entries\""),
                      std::string(kWhatADumpIs) + "; one taken with includeCollectives=False has no entries to diagnose");
  }
  Dump dump;
  if (!doc.is(*version, Kind::String) || !parse_version(doc.string(*version), dump.major, dump.minor) || dump.major != 2) {
    std::string shown = doc.is(*version, Kind::String) ? fmt::format("\"{}\"", doc.string(*version))
                                                       : std::string("of type ") + pickle::kind_name(doc.kind(*version));
    return pyframes::make_error(pyframes::ErrorKind::UnsupportedVersion,
                                fmt::format("Flight Recorder dump version {}; hangshim reads versions 2.x", shown),
                                "the dump versions known are 2.3 to 2.10; a new major version changes fields");
  }
  dump.version = std::string(doc.string(*version));
  dump.comm_lib_version = std::string(walk.text(root, "comm_lib_version").value_or(""));
  if (!doc.is(*entries, Kind::List)) {
    return not_a_dump(fmt::format("\"entries\" is a {}, not a list", pickle::kind_name(doc.kind(*entries))));
  }

  auto config = walk.get(root, "pg_config", Kind::Dict);
  if (!config) return not_a_dump("a Flight Recorder dump without a \"pg_config\" dict: which ranks each process group has is unknown", "every dump of version 2.x has one");
  auto pairs = walk.items(*config);
  std::set<std::string_view> seen;
  for (size_t i = pairs.size(); i >= 2; i -= 2) {  // a name set twice: the last one, as Python keeps it
    if (!doc.is(pairs[i - 2], Kind::String) || !seen.insert(doc.string(pairs[i - 2])).second) continue;
    ValueId info = pairs[i - 1];
    ProcessGroup g;
    g.name = std::string(doc.string(pairs[i - 2]));
    auto ranks = doc.is(info, Kind::Dict) ? walk.get(info, "ranks") : std::nullopt;
    if (!ranks || !parse_ranks(walk, *ranks, g.ranks)) {
      if (walk.exhausted()) break;
      dump.warnings.push_back(fmt::format("process group \"{}\": no readable \"ranks\" (\"[0, 1, ...]\"); its calls are skipped", g.name));
      continue;
    }
    g.desc = std::string(walk.text(info, "desc").value_or(""));
    dump.groups.insert(dump.groups.begin(), std::move(g));
  }

  if (auto status = walk.get(root, "pg_status", Kind::Dict)) {
    auto items = walk.items(*status);
    for (size_t i = 0; i + 1 < items.size(); i += 2) {
      int64_t pg_id = -1;
      std::string_view key = doc.is(items[i], Kind::String) ? doc.string(items[i]) : std::string_view();
      auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), pg_id);
      if (ec != std::errc() || end != key.data() + key.size() || !doc.is(items[i + 1], Kind::Dict)) continue;
      GroupStatus& s = dump.status[pg_id];
      s.last_enqueued = walk.integer(items[i + 1], "last_enqueued_collective").value_or(-1);
      s.last_started = walk.integer(items[i + 1], "last_started_collective").value_or(-1);
      s.last_completed = walk.integer(items[i + 1], "last_completed_collective").value_or(-1);
    }
  }

  std::map<std::string, std::pair<size_t, size_t>> skipped;  // why -> (how many, the first one)
  auto list = walk.items(*entries);
  for (size_t i = 0; i < list.size() && !walk.exhausted(); ++i) {
    Entry e;
    e.index = i;
    if (auto why = read_entry(walk, list[i], e)) {
      auto it = skipped.try_emplace(*why, 0, i).first;
      ++it->second.first;
      continue;
    }
    dump.entries.push_back(std::move(e));
  }
  if (walk.exhausted()) {
    return not_a_dump(fmt::format("values shared or repeated far more than a Flight Recorder dump's ({} bytes of pickle "
                                  "would need more work than {} times their size to read)",
                                  source_bytes, 64), "damaged, or not a dump PyTorch wrote");
  }
  std::vector<std::tuple<size_t, size_t, std::string>> in_order;  // (first entry, how many, why)
  for (const auto& [why, count] : skipped) in_order.emplace_back(count.second, count.first, why);
  std::sort(in_order.begin(), in_order.end());
  for (const auto& [first, n, why] : in_order) {
    dump.warnings.push_back(n == 1 ? fmt::format("entry {}: {}", first, why)
                                   : fmt::format("{} entries (the first: entry {}): {}", n, first, why));
  }
  return dump;
}

}  // namespace hangshim::report::flight_recorder
