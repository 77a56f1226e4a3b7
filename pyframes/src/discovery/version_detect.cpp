#include "discovery/version_detect.h"

#include <fmt/format.h>

#include <cctype>
#include <map>

namespace pyframes {

namespace {

bool parse_number(const std::string& text, size_t& at, int& value) {
  size_t start = at;
  value = 0;
  while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at])) && at - start < 4) {
    value = value * 10 + (text[at] - '0');
    ++at;
  }
  return at > start;
}

}  // namespace

std::optional<PyVersion> version_from_filename(const std::string& path) {
  std::string name = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  size_t at = name.find("python");
  if (at == std::string::npos) return std::nullopt;
  at += 6;
  PyVersion v;
  if (!parse_number(name, at, v.major) || at >= name.size() || name[at] != '.') return std::nullopt;
  ++at;
  if (!parse_number(name, at, v.minor)) return std::nullopt;
  // What follows must end the version: "", ".so...", "m", "d", "u" ABI flags, "-..."
  if (at < name.size() && std::isdigit(static_cast<unsigned char>(name[at]))) return std::nullopt;
  return v;
}

PyVersion version_from_hex(uint32_t hex) {
  PyVersion v;
  v.major = static_cast<int>(hex >> 24);
  v.minor = static_cast<int>((hex >> 16) & 0xff);
  v.micro = static_cast<int>((hex >> 8) & 0xff);
  v.hex = hex;
  return v;
}

std::optional<PyVersion> version_from_rodata(const ElfFile& elf, const std::optional<PyVersion>& hint) {
  std::string_view data = elf.section_bytes(".rodata");
  if (data.empty()) return std::nullopt;
  // Candidates: "3.N.M" plus an optional release tag ("a1", "rc2", "+"), ending in NUL.
  std::map<std::pair<int, int>, std::map<int, int>> seen;  // (major, minor) -> micro -> count
  // With a hint, only "3.<minor>." can match: search for that (memchr-fast) instead of "3.".
  std::string needle = hint ? fmt::format("3.{}.", hint->minor) : std::string("3.");
  for (size_t i = data.find(needle); i != std::string_view::npos && i + 5 < data.size(); i = data.find(needle, i + 1)) {
    if (i > 0 && (std::isdigit(static_cast<unsigned char>(data[i - 1])) || data[i - 1] == '.')) continue;
    std::string text(data.substr(i, 16));
    size_t at = 2;
    int minor = 0, micro = 0;
    if (!parse_number(text, at, minor) || at >= text.size() || text[at] != '.') continue;
    ++at;
    if (!parse_number(text, at, micro)) continue;
    while (at < text.size() && (std::isalnum(static_cast<unsigned char>(text[at])) || text[at] == '+')) ++at;
    if (at >= text.size() || text[at] != '\0') continue;
    if (minor < 6 || minor > 40) continue;
    if (hint && (hint->major != 3 || hint->minor != minor)) continue;
    ++seen[{3, minor}][micro];
  }
  if (seen.empty()) return std::nullopt;
  if (!hint && seen.size() != 1) return std::nullopt;  // several minor versions: cannot tell
  const auto& micros = seen.begin()->second;
  if (micros.size() != 1) {
    PyVersion v;
    v.major = 3;
    v.minor = seen.begin()->first.second;
    return v;  // the micro version is ambiguous: keep major.minor only
  }
  PyVersion v;
  v.major = 3;
  v.minor = seen.begin()->first.second;
  v.micro = micros.begin()->first;
  return v;
}

}  // namespace pyframes
