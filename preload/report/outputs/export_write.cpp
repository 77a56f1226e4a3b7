#include "report/outputs/export_write.h"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "ledger/reader.h"
#include "pyframes/json_writer.h"
#include "pyframes/render.h"
#include "report/inputs/base64.h"
#include "report/inputs/live_stacks.h"
#include "report/inputs/liveness.h"

namespace hangshim::report {

namespace {

std::string error_text(const pyframes::Error& e) {
  return e.hint.empty() ? e.message : fmt::format("{} ({})", e.message, e.hint);
}

struct Entry {
  std::string path;
  std::vector<unsigned char> bytes;
  Liveness liveness = Liveness::Unknown;
  int64_t pid = 0;
};

// The ledger's bytes as runs of [offset, base64]: the stretches between runs of at least
// kExportZeroRun zero bytes, which the reader leaves zero (it rebuilds into zeroed memory). A
// ledger is mostly zero even where it is in use (the ring's unused fields, the header's unused
// text), so splitting at shorter zero runs than a page's made exports about 30% smaller and
// faster to read; a run costs about 14 bytes of JSON, as many as ~10 bytes of base64, so runs
// of fewer zeros than kExportZeroRun stay inside their stretch.
constexpr size_t kExportZeroRun = 32;

void write_pages(pyframes::JsonWriter& j, const std::vector<unsigned char>& bytes) {
  j.key("pages").begin_array();
  size_t at = 0;
  const size_t size = bytes.size();
  while (at < size) {
    while (at < size && bytes[at] == 0) ++at;
    if (at == size) break;
    size_t start = at;
    size_t zeros = 0;  // zero bytes in a row just before `at`
    while (at < size && zeros < kExportZeroRun) {
      zeros = bytes[at] == 0 ? zeros + 1 : 0;
      ++at;
    }
    size_t end = at - zeros;
    j.begin_array().value(static_cast<uint64_t>(start)).value(base64_encode(&bytes[start], end - start)).end_array();
  }
  j.end_array();
}

// `object` is a complete JSON object; adds "key": raw before its closing brace.
std::string with_member(std::string object, std::string_view key, std::string_view raw) {
  size_t close = object.rfind('}');
  std::string member;
  pyframes::append_json_string(member, key);
  object.insert(close, fmt::format(",{}:{}", member, raw));
  return object;
}

}  // namespace

ExportOutcome build_export(const ExportOptions& options) {
  ExportOutcome out;
  std::vector<Entry> entries;
  ledger::LedgerReader reader;
  for (const auto& dir_path : options.dirs) {
    DIR* dir = ::opendir(dir_path.c_str());
    if (dir == nullptr) {
      out.errors.push_back({dir_path, fmt::format("cannot list {}: {} (is HANGSHIM_DIR right on this node?)", dir_path,
                                                  std::strerror(errno))});
      continue;
    }
    std::vector<std::string> names;
    while (dirent* e = ::readdir(dir)) {
      std::string name = e->d_name;
      if (name.size() > 7 && name.compare(name.size() - 7, 7, ".ledger") == 0) names.push_back(name);
    }
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    for (const auto& name : names) {
      std::string path = dir_path + (dir_path.back() == '/' ? "" : "/") + name;
      // Refused here when the report would refuse it; shipped as the consistent copy the
      // reader parsed (never a plain read of a file its writer may be changing: a torn ring
      // entry would reach the other side looking whole).
      Entry entry;
      auto parsed = reader.read(path, entry.bytes);
      if (!parsed) {
        out.errors.push_back({path, error_text(parsed.error())});
        continue;
      }
      entry.path = path;
      entry.pid = parsed->header.pid;
      entry.liveness = judge_liveness(parsed->header.host, parsed->header.pid, parsed->header.start_ns, options.here);
      entries.push_back(std::move(entry));
    }
  }

  std::vector<int64_t> pids;
  std::vector<size_t> alive;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (options.stacks && entries[i].liveness == Liveness::Alive) {
      pids.push_back(entries[i].pid);
      alive.push_back(i);
    }
  }
  std::vector<std::string> stacks(entries.size());
  std::vector<std::string> stack_errors(entries.size());
  auto results = read_live_stacks(pids);
  for (size_t k = 0; k < results.size(); ++k) {
    if (results[k]) {
      stacks[alive[k]] = pyframes::render_json({results[k].value()}, {});
      ++out.stacks;
    } else {
      stack_errors[alive[k]] = error_text(results[k].error());
    }
  }

  std::string doc;
  {
    pyframes::JsonWriter head;
    head.begin_object();
    head.field("format", kExportFormat).field("version", kExportVersion).field("host", options.here);
    head.field("time_ns", options.now_ns).field("hangshim_version", HANGSHIM_VERSION);
    head.key("directories").begin_array();
    for (const auto& d : options.dirs) head.value(d);
    head.end_array();
    head.end_object();
    const std::string& h = head.str();
    doc = h.substr(0, h.size() - 1);  // reopened: the ledgers follow
  }
  doc += ",\"ledgers\":[\n";
  for (size_t i = 0; i < entries.size(); ++i) {
    pyframes::JsonWriter j;
    j.begin_object();
    j.field("source", entries[i].path).field("size", static_cast<uint64_t>(entries[i].bytes.size()));
    j.field("liveness", liveness_name(entries[i].liveness));
    if (!stack_errors[i].empty()) j.field("stack_error", stack_errors[i]);
    write_pages(j, entries[i].bytes);
    j.end_object();
    doc += stacks[i].empty() ? j.str() : with_member(j.str(), "stacks", stacks[i]);
    doc += i + 1 < entries.size() ? ",\n" : "\n";
  }
  doc += "],\"errors\":";
  pyframes::JsonWriter errors;
  errors.begin_array();
  for (const auto& e : out.errors) errors.begin_object().field("source", e.source).field("message", e.message).end_object();
  errors.end_array();
  doc += errors.str();
  doc += "}\n";
  out.json = std::move(doc);
  out.ledgers = entries.size();
  return out;
}

}  // namespace hangshim::report
