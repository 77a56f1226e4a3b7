#include "report/analysis/source_loops.h"

#include <fstream>

namespace hangshim::report {

namespace {

constexpr size_t kLargestFile = 8u << 20;  // a source file, not a data file named .py

// Leading whitespace width (a tab to the next multiple of 8, as Python reads it); -1 for a blank
// or comment-only line, which never closes or opens a block.
int indent_of(const std::string& text) {
  int width = 0;
  for (char c : text) {
    if (c == ' ') {
      ++width;
    } else if (c == '\t') {
      width = (width / 8 + 1) * 8;
    } else {
      return c == '#' || c == '\r' ? -1 : width;
    }
  }
  return -1;
}

bool starts_with(const std::string& text, size_t at, const char* word) {
  return text.compare(at, std::char_traits<char>::length(word), word) == 0;
}

}  // namespace

const std::vector<std::string>* SourceLoops::lines_of(const std::string& file) const {
  auto it = files_.find(file);
  if (it == files_.end()) {
    std::vector<std::string> lines;
    std::ifstream in(file, std::ios::binary);
    std::string text;
    size_t total = 0;
    while (in && std::getline(in, text) && total < kLargestFile) {
      total += text.size() + 1;
      lines.push_back(std::move(text));
    }
    it = files_.emplace(file, std::move(lines)).first;
  }
  return it->second.empty() ? nullptr : &it->second;
}

std::vector<int> SourceLoops::headers(const std::string& file, int line, bool* readable) const {
  std::vector<int> out;
  const std::vector<std::string>* lines = lines_of(file);
  bool ok = lines != nullptr && line >= 1 && static_cast<size_t>(line) <= lines->size();
  if (readable != nullptr) *readable = ok;
  if (!ok) return out;
  int current = indent_of((*lines)[static_cast<size_t>(line - 1)]);
  if (current < 0) return out;
  for (int i = line - 1; i >= 1 && current > 0; --i) {
    const std::string& text = (*lines)[static_cast<size_t>(i - 1)];
    int indent = indent_of(text);
    if (indent < 0 || indent >= current) continue;
    current = indent;
    size_t at = static_cast<size_t>(indent);
    while (at < text.size() && (text[at] == ' ' || text[at] == '\t')) ++at;
    if (starts_with(text, at, "for ") || starts_with(text, at, "while ") || starts_with(text, at, "async for ") ||
        starts_with(text, at, "while(")) {
      out.push_back(i);
    } else if (starts_with(text, at, "def ") || starts_with(text, at, "async def ") || starts_with(text, at, "class ")) {
      break;
    }
  }
  return out;
}

bool SourceLoops::in_same_loop(const std::string& file, int line, int other) const {
  std::vector<int> mine = headers(file, line);
  if (mine.empty()) return false;
  if (other == mine.front()) return true;  // the loop's own header: fetching the next item
  std::vector<int> theirs = headers(file, other);
  for (int h : theirs) {
    if (h == mine.front()) return true;
  }
  return false;
}

}  // namespace hangshim::report
