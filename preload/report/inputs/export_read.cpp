// Reading an export (export_format.h) back into RankViews: every ledger it carries is rebuilt
// byte for byte and parsed by the same untrusted reader as a file; the exporting node's
// judgement of liveness and its live stacks come along.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "ledger/reader.h"
#include "report/inputs/base64.h"
#include "report/inputs/export_format.h"
#include "pyframes/json_reader.h"
#include "report/inputs/load_inputs.h"
#include "report/inputs/read_fully.h"
#include "report/inputs/read_in_parallel.h"

namespace hangshim::report {

namespace {

constexpr uint64_t kMaxExportBytes = 1ull << 30;
// The largest file a writer can make (the reader's bounds on every section), rounded up.
constexpr uint64_t kMaxLedgerBytes =
    ledger::kHeaderSize + uint64_t{ledger::kMaxCommCapacity} * sizeof(ledger::CommEntry) +
    uint64_t{ledger::kMaxRingCapacity} * sizeof(ledger::RingEntry) +
    uint64_t{ledger::kMaxCallsiteCapacity} * ledger::callsite_entry_size(ledger::kMaxCallsiteDepth) +
    ledger::kMaxStringsSize + (1u << 20);

using pyframes::JsonValue;

std::string str_of(const JsonValue& object, std::string_view key, std::string fallback = {}) {
  const JsonValue* v = object.find(key);
  std::optional<std::string_view> text = v != nullptr ? v->text() : std::nullopt;
  return text ? std::string(*text) : fallback;
}

uint64_t u64_of(const JsonValue& object, std::string_view key, uint64_t fallback) {
  const JsonValue* v = object.find(key);
  return v != nullptr ? v->uint64().value_or(fallback) : fallback;
}

std::string error_text(const pyframes::Error& e) {
  return e.hint.empty() ? e.message : fmt::format("{} ({})", e.message, e.hint);
}

// An export's bytes. Those of the usual size are in memory this thread reuses from one export
// to the next (valid until its next read_text); a larger one has memory of its own. Never
// zero-filled first: a fresh string of each file's size was, and writing 276 KiB of zeros
// before reading over them was 3 % of a report over 16384 exports.
struct ExportText {
  std::unique_ptr<char[]> owned;  // a large file's bytes
  std::string_view bytes;
};

pyframes::Result<ExportText> read_text(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int err = errno;
    return pyframes::make_error(pyframes::ErrorKind::Io, fmt::format("cannot open {}: {}", path, std::strerror(err)),
                                err == ELOOP ? "pass the export file itself, not a link to it" : "");
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return pyframes::make_error(pyframes::ErrorKind::Usage, fmt::format("{} is not a regular file", path),
                                "pass a ledger directory, a .ledger file or an export");
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxExportBytes) {
    ::close(fd);
    return pyframes::make_error(pyframes::ErrorKind::Corrupt,
                                fmt::format("{}: {} bytes, larger than any export ({} bytes at most)", path, st.st_size,
                                            kMaxExportBytes),
                                "pass the .json file `hangshim export` wrote");
  }
  constexpr size_t kReusedBytes = 16u << 20;
  size_t size = static_cast<size_t>(st.st_size);
  ExportText text;
  char* into = nullptr;
  if (size > kReusedBytes) {
    text.owned.reset(new char[size]);
    into = text.owned.get();
  } else {
    thread_local std::vector<char> reused;  // grown, never shrunk: zeroed once, as it grows
    if (reused.size() < size) reused.resize(size);
    into = reused.data();
  }
  text.bytes = std::string_view(into, read_fully(fd, into, size));
  ::close(fd);
  return text;
}

// Memory for one ledger. Ledgers of the usual size go to memory reused from one to the next (a
// fresh mapping each cost a dozen page faults per rank, most of the kernel's time over thousands
// of exports), holding the previous ledger's bytes: the caller zeroes what the export leaves
// out. A large one gets an anonymous mapping, zero already, whose pages the export leaves out
// cost nothing.
class LedgerBuffer {
 public:
  explicit LedgerBuffer(size_t size) : size_(size) {
    if (size <= kReusedBytes) {
      thread_local std::vector<unsigned char> reused;
      if (reused.size() < size) reused.resize(size);
      data_ = reused.data();
      return;
    }
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    data_ = p == MAP_FAILED ? nullptr : static_cast<unsigned char*>(p);
    mapped_ = data_ != nullptr;
  }
  ~LedgerBuffer() {
    if (mapped_) ::munmap(data_, size_);
  }
  LedgerBuffer(const LedgerBuffer&) = delete;
  LedgerBuffer& operator=(const LedgerBuffer&) = delete;
  unsigned char* data() { return data_; }
  size_t size() const { return size_; }
  bool zeroed() const { return mapped_; }
  // Zeroes [from, to) unless the buffer is all zeros still.
  void zero(uint64_t from, uint64_t to) {
    if (!mapped_ && to > from) std::memset(data_ + from, 0, static_cast<size_t>(to - from));
  }

 private:
  static constexpr size_t kReusedBytes = 4u << 20;
  unsigned char* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
};

// Rebuilds one ledger of the export, its records read into `records`' memory; an error message
// when the entry is unusable.
pyframes::Result<ledger::Ledger> rebuild(const JsonValue& entry, const std::string& name,
                                         std::vector<ledger::CallRecord>& records) {
  uint64_t size = u64_of(entry, "size", UINT64_MAX);
  if (size == UINT64_MAX || size > kMaxLedgerBytes) {
    return pyframes::make_error(pyframes::ErrorKind::Corrupt, fmt::format("{}: ledger size missing or impossible", name),
                                "export the node again");
  }
  LedgerBuffer buffer(static_cast<size_t>(size));
  if (size > 0 && buffer.data() == nullptr) {
    return pyframes::make_error(pyframes::ErrorKind::Io, fmt::format("{}: no memory for {} bytes", name, size));
  }
  const JsonValue* pages = entry.find("pages");
  if (pages == nullptr || !pages->is_array()) {
    return pyframes::make_error(pyframes::ErrorKind::Corrupt, fmt::format("{}: no ledger bytes (\"pages\")", name),
                                "export the node again");
  }
  // Runs come in file order, apart (export_write.cpp): the gap before each is zeroed (a reused
  // buffer holds the last ledger's bytes), the run decoded over what is there; on a fresh
  // mapping a run's zero bytes need no writing. One that overlaps an earlier run is decoded in
  // full.
  uint64_t untouched = 0;  // bytes from here on are neither written nor zeroed yet
  for (const auto& run : pages->items()) {
    const auto& parts = run.items();
    uint64_t offset = parts.size() == 2 ? parts[0].uint64().value_or(UINT64_MAX) : UINT64_MAX;
    std::optional<std::string_view> text = parts.size() == 2 ? parts[1].text() : std::nullopt;
    bool usable = offset != UINT64_MAX && offset <= size && text.has_value();
    if (usable) buffer.zero(untouched, offset);
    int64_t written = !usable ? -1
                              : base64_decode(*text, buffer.data() + offset, static_cast<size_t>(size - offset),
                                              buffer.zeroed() && offset >= untouched);
    if (written >= 0) untouched = std::max(untouched, offset + static_cast<uint64_t>(written));
    if (written < 0) {
      return pyframes::make_error(pyframes::ErrorKind::Corrupt,
                                  fmt::format("{}: damaged ledger bytes (a page run outside the file or not base64)", name),
                                  "export the node again");
    }
  }
  buffer.zero(untouched, size);
  // The export carries the snapshot its node parsed (export_write.cpp): every ring slot stable
  // or marked odd, and nothing writes this copy.
  return ledger::parse_ledger_copy(buffer.data(), static_cast<size_t>(size), name, &records);
}

// One rank of an export, read by any thread (prepare_export), for add_export to finish.
struct ExportedRank {
  RankView view;          // all but what `prepared` holds, and its stacks
  PreparedRank prepared;  // for finish_rank_view
  std::optional<pyframes::Process> stacks;
};

// Everything an export adds to the inputs, in its order: its errors, then its ranks.
struct PreparedExport {
  std::vector<InputError> errors;
  std::vector<ExportedRank> ranks;
};

PreparedExport prepare_export(const std::string& path, const LoadOptions& options) {
  PreparedExport out;
  auto text = read_text(path);
  if (!text) {
    out.errors.push_back({path, error_text(text.error())});
    return out;
  }
  // Its strings as views into the text, which outlives the document: the ledgers' base64 runs,
  // nearly all of an export's bytes, are decoded from where they lie, never copied first (the
  // copies were an eighth of a report's CPU over 16384 exports).
  auto doc = pyframes::parse_json(text->bytes, pyframes::JsonStrings::Views);
  if (!doc) {
    out.errors.push_back({path, fmt::format("{}: {} (the file was cut or damaged in transfer; export it again)",
                                            path, doc.error().message)});
    return out;
  }
  if (!doc->is_object() || str_of(*doc, "format") != kExportFormat) {
    out.errors.push_back({path, fmt::format("{}: not a hangshim export (no \"format\": \"{}\"); pass exports, "
                                            "ledger directories or .ledger files", path, kExportFormat)});
    return out;
  }
  uint64_t version = u64_of(*doc, "version", 0);
  if (version != kExportVersion) {
    out.errors.push_back({path, fmt::format("{}: export format version {}; this hangshim reads version {} (use the "
                                            "hangshim release that wrote it)", path, version, kExportVersion)});
    return out;
  }
  std::string host = str_of(*doc, "host");
  uint64_t time_ns = u64_of(*doc, "time_ns", 0);
  if (const JsonValue* errors = doc->find("errors"); errors != nullptr) {
    for (const auto& e : errors->items()) {
      out.errors.push_back({fmt::format("{}: {}", path, str_of(e, "source")),
                            fmt::format("{}: on {}: {}", path, host.empty() ? "the exporting node" : host,
                                        str_of(e, "message"))});
    }
  }
  const JsonValue* ledgers = doc->find("ledgers");
  if (ledgers == nullptr || !ledgers->is_array()) {
    out.errors.push_back({path, fmt::format("{}: an export without \"ledgers\"; export the node again", path)});
    return out;
  }
  out.ranks.reserve(ledgers->items().size());  // views are filled in place, never moved about
  thread_local std::vector<ledger::CallRecord> records;  // read into again from one ledger to the next
  for (const auto& entry : ledgers->items()) {
    std::string name = fmt::format("{}: {}", path, str_of(entry, "source", "?"));
    auto ledger = rebuild(entry, name, records);
    if (!ledger) {
      out.errors.push_back({name, error_text(ledger.error())});
      continue;
    }
    ExportedRank& rank = out.ranks.emplace_back();
    RankView& view = rank.view;
    prepare_rank_view(std::move(ledger.value()), options.view, view, rank.prepared);
    records = std::move(ledger->records);
    if (records.capacity() > 32768) std::vector<ledger::CallRecord>().swap(records);  // a huge ring's: not kept
    Liveness liveness = Liveness::Unknown;
    if (parse_liveness(str_of(entry, "liveness"), liveness) && liveness != Liveness::Unknown) {
      view.liveness = liveness;
      view.judged_on = host;
    }
    view.observed_ns = time_ns != 0 ? time_ns : options.now_ns;
    view.stack_error = str_of(entry, "stack_error");
    if (const JsonValue* stacks = entry.find("stacks"); stacks != nullptr) {
      auto dump = pyframes::dump_from_json(*stacks);  // the render_json document the export holds
      if (dump && !dump->processes.empty()) {
        rank.stacks = std::move(dump->processes.front());
      } else {
        view.stack_error = dump ? std::string("stacks without a process") : dump.error().message;
      }
    }
  }
  return out;
}

void add_export(PreparedExport&& exported, Inputs& inputs, const LoadOptions& options) {
  for (auto& e : exported.errors) inputs.errors.push_back(std::move(e));
  for (auto& rank : exported.ranks) {
    finish_rank_view(rank.view, rank.prepared, inputs, options.patterns);
    if (rank.stacks) {
      rank.view.stacks = static_cast<int>(inputs.stacks.size());
      inputs.stacks.push_back(std::move(*rank.stacks));
    }
    inputs.ranks.push_back(std::move(rank.view));
  }
  exported = PreparedExport{};  // its slot's memory goes back now, not when the slot is next used
}

}  // namespace

void load_export_file(const std::string& path, Inputs& inputs, const LoadOptions& options) {
  add_export(prepare_export(path, options), inputs, options);
}

void load_export_files(const std::vector<std::string>& paths, Inputs& inputs, const LoadOptions& options) {
  // An export holds a node's ranks (8 on a GPU node): fewer to a batch than ledgers.
  constexpr size_t kBatch = 64;
  std::vector<PreparedExport> slots(std::min(paths.size(), 2 * kBatch));
  // Room for 8 ranks an export, so that the views are not moved each time the array grows
  // (twice each on average; 0.1 s over 16384 exports): memory reserved and not used is never
  // touched, so it costs no pages.
  inputs.ranks.reserve(inputs.ranks.size() + 8 * paths.size());
  read_in_parallel(
      paths.size(), reading_threads(options.threads, paths.size(), 4), kBatch,
      [&](size_t, size_t i) { slots[i % slots.size()] = prepare_export(paths[i], options); },
      [&](size_t i) { add_export(std::move(slots[i % slots.size()]), inputs, options); });
}

}  // namespace hangshim::report
