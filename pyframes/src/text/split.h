// Text cut at a separator byte, the one way pyframes does it: the NUL-separated /proc files
// (cmdline, environ), the lines of a source file, the space-separated command line a core's
// NT_PRPSINFO note keeps.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pyframes::text {

// The pieces of `text` between separators. A separator at the very end ends the last piece
// instead of starting an empty one ("a\nb\n" -> {"a", "b"}); empty pieces elsewhere are kept
// unless `keep_empty` is false.
inline std::vector<std::string> split(std::string_view text, char separator, bool keep_empty = true) {
  std::vector<std::string> pieces;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(separator, start);
    if (end == std::string_view::npos) end = text.size();
    if (keep_empty || end > start) pieces.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return pieces;
}

}  // namespace pyframes::text
