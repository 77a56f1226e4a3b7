#include "ledger/names.h"

#include <dirent.h>

#include <algorithm>
#include <charconv>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

namespace hangshim::ledger {

namespace {
constexpr std::string_view kPrefix = "hangshim-";
constexpr std::string_view kSuffix = ".ledger";

std::string sanitize(const std::string& host) {
  std::string out;
  for (char c : host) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_';
    out.push_back(ok ? c : '_');
  }
  if (out.empty()) out = "unknown";
  return out.substr(0, 64);
}
}  // namespace

std::string file_name_host(const std::string& host) { return sanitize(host); }

std::string ledger_file_name(const std::string& host, int64_t pid, int32_t rank) {
  std::string rank_part = rank >= 0 ? fmt::format("r{:05}", rank) : "norank";
  return fmt::format("{}{}-{}-{}{}", kPrefix, rank_part, sanitize(host), pid, kSuffix);
}

std::string stacks_file_name(const std::string& ledger_name) {
  std::string base = ledger_name;
  if (base.size() > kSuffix.size() && base.compare(base.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0) {
    base.resize(base.size() - kSuffix.size());
  }
  return base + ".stacks.txt";
}

bool parse_ledger_file_name(const std::string& name, ParsedLedgerName& out) {
  std::string_view n = name;
  if (n.size() <= kPrefix.size() + kSuffix.size() || n.substr(0, kPrefix.size()) != kPrefix ||
      n.substr(n.size() - kSuffix.size()) != kSuffix) {
    return false;
  }
  n = n.substr(kPrefix.size(), n.size() - kPrefix.size() - kSuffix.size());
  size_t first = n.find('-');
  size_t last = n.rfind('-');
  if (first == std::string_view::npos || last == first) return false;
  std::string_view rank = n.substr(0, first);
  std::string_view host = n.substr(first + 1, last - first - 1);
  std::string_view pid = n.substr(last + 1);
  if (rank == "norank") {
    out.rank = -1;
  } else {
    if (rank.size() < 2 || rank[0] != 'r') return false;
    auto [end, ec] = std::from_chars(rank.data() + 1, rank.data() + rank.size(), out.rank);
    if (ec != std::errc() || end != rank.data() + rank.size()) return false;
  }
  auto [end, ec] = std::from_chars(pid.data(), pid.data() + pid.size(), out.pid);
  if (ec != std::errc() || end != pid.data() + pid.size() || out.pid <= 0 || host.empty()) return false;
  out.host = std::string(host);
  return true;
}

std::vector<std::string> list_ledger_files(const std::string& dir) {
  struct Found {
    ParsedLedgerName name;
    std::string path;
  };
  std::vector<Found> found;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* entry = ::readdir(d)) {
      ParsedLedgerName parsed;
      if (parse_ledger_file_name(entry->d_name, parsed)) found.push_back({parsed, dir + "/" + entry->d_name});
    }
    ::closedir(d);
  }
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    return std::tie(a.name.rank, a.name.host, a.name.pid) < std::tie(b.name.rank, b.name.host, b.name.pid);
  });
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(std::move(f.path));
  return out;
}

}  // namespace hangshim::ledger
