// Source lines for the text renderer. Files come from the target's co_filename, so they may be
// anything: missing, huge, a FIFO that would block, not UTF-8. Only regular files are opened,
// non-blocking, and only their first `max_file_bytes` bytes are read.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string_view>

#include "pyframes/render.h"
#include "pyframes/utf8.h"

namespace pyframes {

namespace {

std::optional<std::string> read_regular_file(const std::string& path, size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return std::nullopt;
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return std::nullopt;
  }
  std::string content;
  content.resize(std::min<size_t>(static_cast<size_t>(info.st_size), max_bytes));
  size_t filled = 0;
  while (filled < content.size()) {
    const ssize_t got = ::read(fd, content.data() + filled, content.size() - filled);
    if (got <= 0) break;  // error or a file that shrank: keep what was read
    filled += static_cast<size_t>(got);
  }
  ::close(fd);
  content.resize(filled);
  return content;
}

// Where each line starts, cut as text::split cuts ("a\nb\n" is two lines): offsets instead of a
// string per line, since a traceback needs a few lines of files that have thousands.
std::vector<size_t> line_starts(std::string_view content) {
  std::vector<size_t> starts;
  size_t start = 0;
  while (start < content.size()) {
    starts.push_back(start);
    const size_t end = content.find('\n', start);
    start = end == std::string_view::npos ? content.size() : end + 1;
  }
  return starts;
}

std::string_view trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\f\v";
  const size_t first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  const size_t last = text.find_last_not_of(kSpace);
  return text.substr(first, last - first + 1);
}

}  // namespace

SourceCache::SourceCache(size_t max_files, size_t max_file_bytes)
    : max_files_(max_files == 0 ? 1 : max_files), max_file_bytes_(max_file_bytes) {}

const SourceCache::Entry& SourceCache::load(const std::string& path) {
  if (auto found = index_.find(path); found != index_.end()) {
    entries_.splice(entries_.begin(), entries_, found->second);  // most recently used first
    return entries_.front();
  }
  Entry entry;
  entry.path = path;
  if (auto content = read_regular_file(path, max_file_bytes_)) {
    entry.readable = true;
    entry.text = std::move(*content);
    if (std::string_view(entry.text).substr(0, 3) == "\xEF\xBB\xBF") entry.text.erase(0, 3);  // UTF-8 byte order mark
    entry.line_starts = line_starts(entry.text);
  }
  entries_.push_front(std::move(entry));
  index_[path] = entries_.begin();
  while (entries_.size() > max_files_) {
    index_.erase(entries_.back().path);
    entries_.pop_back();
  }
  return entries_.front();
}

std::optional<std::string_view> SourceCache::Entry::raw_line(int line) const {
  if (!readable || line <= 0 || static_cast<size_t>(line) > line_starts.size()) return std::nullopt;
  const size_t start = line_starts[static_cast<size_t>(line) - 1];
  const size_t end = std::min(text.find('\n', start), text.size());
  return std::string_view(text).substr(start, end - start);
}

std::optional<std::string> SourceCache::line(const std::string& path, int line) {
  if (path.empty() || line <= 0) return std::nullopt;
  auto raw = load(path).raw_line(line);
  if (!raw) return std::nullopt;
  return render::printable_line(trim(*raw));
}

std::optional<std::string> SourceCache::carets(const std::string& path, int line, int column, int end_column) {
  if (path.empty() || line <= 0 || column < 0 || end_column <= column) return std::nullopt;
  auto raw_line = load(path).raw_line(line);
  if (!raw_line) return std::nullopt;
  std::string_view raw = *raw_line;
  std::string_view cleaned = trim(raw);
  if (cleaned.empty()) return std::nullopt;
  const size_t lead = static_cast<size_t>(cleaned.data() - raw.data());
  const size_t from = static_cast<size_t>(column);
  const size_t to = static_cast<size_t>(end_column);
  if (from < lead || to > lead + cleaned.size()) return std::nullopt;
  if (from == lead && to == lead + cleaned.size()) return std::nullopt;
  // One caret per character (code point): UTF-8 continuation bytes take no column.
  auto characters = [](std::string_view bytes) {
    size_t count = 0;
    for (unsigned char c : bytes) count += (c & 0xC0) != 0x80 ? 1 : 0;
    return count;
  };
  return std::string(characters(raw.substr(lead, from - lead)), ' ') + std::string(characters(raw.substr(from, to - from)), '^');
}

}  // namespace pyframes
