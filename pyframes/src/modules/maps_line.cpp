#include "modules/maps_line.h"

namespace pyframes {

namespace {

// Skips the spaces at `at`, then takes the field up to the next space.
std::string_view next_field(std::string_view line, size_t& at) noexcept {
  while (at < line.size() && line[at] == ' ') ++at;
  const size_t begin = at;
  while (at < line.size() && line[at] != ' ') ++at;
  return line.substr(begin, at - begin);
}

// Lower-case hexadecimal, as the kernel writes it; at most 16 digits.
bool parse_hex(std::string_view text, uint64_t& value) noexcept {
  if (text.empty() || text.size() > 16) return false;
  value = 0;
  for (char c : text) {
    const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (digit < 0) return false;
    value = value << 4 | static_cast<uint64_t>(digit);
  }
  return true;
}

}  // namespace

bool parse_maps_line(std::string_view line, MapsLine& out) noexcept {
  size_t at = 0;
  const std::string_view range = next_field(line, at);
  const std::string_view perms = next_field(line, at);
  const std::string_view offset = next_field(line, at);
  const size_t dash = range.find('-');
  if (dash == std::string_view::npos || !parse_hex(range.substr(0, dash), out.start) ||
      !parse_hex(range.substr(dash + 1), out.end) || perms.empty() || !parse_hex(offset, out.file_offset)) {
    return false;
  }
  out.readable = perms[0] == 'r';
  out.writable = perms.size() > 1 && perms[1] == 'w';
  out.executable = perms.size() > 2 && perms[2] == 'x';
  next_field(line, at);  // dev
  next_field(line, at);  // inode
  while (at < line.size() && line[at] == ' ') ++at;
  std::string_view path = line.substr(at);
  static constexpr std::string_view kDeleted = " (deleted)";
  if (path.size() > kDeleted.size() && path.ends_with(kDeleted)) path.remove_suffix(kDeleted.size());
  out.path = path;
  return true;
}

}  // namespace pyframes
