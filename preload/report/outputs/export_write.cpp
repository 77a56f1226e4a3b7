#include "report/outputs/export_write.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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
#include "report/inputs/read_fully.h"

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

// The file's bytes as they are now (pread, not a mapping: a file cut by someone else while we
// read it gives a short read, never a SIGBUS).
pyframes::Result<std::vector<unsigned char>> snapshot(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return pyframes::make_error(pyframes::ErrorKind::Io, fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return pyframes::make_error(pyframes::ErrorKind::Usage, fmt::format("{} is not a regular file", path));
  }
  std::vector<unsigned char> bytes(static_cast<size_t>(st.st_size));
  bytes.resize(read_fully(fd, bytes.data(), bytes.size()));
  ::close(fd);
  return bytes;
}

bool zero_page(const unsigned char* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != 0) return false;
  }
  return true;
}

void write_pages(pyframes::JsonWriter& j, const std::vector<unsigned char>& bytes) {
  j.key("pages").begin_array();
  size_t page = 0;
  while (page * kExportPage < bytes.size()) {
    size_t start = page * kExportPage;
    if (zero_page(&bytes[start], std::min(kExportPage, bytes.size() - start))) {
      ++page;
      continue;
    }
    size_t end = start;
    while (end < bytes.size() && !zero_page(&bytes[end], std::min(kExportPage, bytes.size() - end))) end += kExportPage;
    end = std::min(end, bytes.size());
    j.begin_array().value(static_cast<uint64_t>(start)).value(base64_encode(&bytes[start], end - start)).end_array();
    page = end / kExportPage + (end % kExportPage != 0 ? 1 : 0);
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
      auto parsed = ledger::read_ledger_file(path);  // refuse what the report would refuse, here
      if (!parsed) {
        out.errors.push_back({path, error_text(parsed.error())});
        continue;
      }
      auto bytes = snapshot(path);
      if (!bytes) {
        out.errors.push_back({path, error_text(bytes.error())});
        continue;
      }
      Entry entry;
      entry.path = path;
      entry.bytes = std::move(bytes.value());
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
